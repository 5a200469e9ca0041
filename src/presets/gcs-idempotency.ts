/**
 * The questions a retry loop asks of Cloud Storage's idempotency table (`gcs-table.ts`): what
 * kind of operation is this, and may this request, with the preconditions it carries, be sent
 * again? Everything is validated, so a misspelled operation, strategy or precondition throws
 * instead of quietly turning retries off (or on). Pure: no I/O, no clock, no state.
 *
 * @module
 */
import { describe, ownFields } from '../util/check.js';
import { GCS_OPERATIONS, GCS_TABLE, type GcsOperation, type GcsPreconditions, type PreconditionField } from './gcs-table.js';
import { normalizeName, suggest } from '../util/suggest.js';

/**
 * The three idempotency classes of the Cloud Storage documentation:
 * - `'always'`: resending never changes the outcome;
 * - `'conditional'`: safe to resend only when the request carries the right precondition;
 * - `'never'`: each successful request creates or changes something anew.
 *
 * @example
 * const kind: GcsIdempotency = gcsIdempotency('hmacKeys.create'); // 'never'
 */
export type GcsIdempotency = 'always' | 'conditional' | 'never';

/**
 * How much a caller trusts the table when deciding whether to retry:
 * `'always'` retries every operation, `'never'` none, and `'conditional'` (the careful
 * choice) follows the table and the request's preconditions.
 *
 * @example
 * const strategy: GcsRetryStrategy = 'conditional';
 * gcs({ operation: 'objects.patch', preconditions: { ifMetagenerationMatch: 3 }, strategy });
 */
export type GcsRetryStrategy = GcsIdempotency;

/**
 * The idempotency class of a Cloud Storage JSON API operation, as the retry-strategy
 * documentation gives it. A misspelled name throws rather than falling back to a default:
 * guessing `'never'` would silently disable retries, guessing `'always'` could duplicate writes.
 *
 * `preconditions` is validated as {@link gcsPreconditionMet} does, but does not change the
 * answer: the class belongs to the operation.
 *
 * @example
 * gcsIdempotency('objects.get');     // 'always'
 * gcsIdempotency('objects.insert');  // 'conditional'
 * gcsIdempotency('hmacKeys.create'); // 'never'
 *
 * @throws {TypeError} if `operation` is not one of {@link GCS_OPERATIONS} (the message
 *   suggests the nearest valid name when there is one), or for malformed preconditions.
 * @throws {RangeError} for a generation-like precondition that is not a non-negative int64.
 */
export function gcsIdempotency(operation: GcsOperation, preconditions?: GcsPreconditions): GcsIdempotency {
  const row = GCS_TABLE[checkOperation(operation)];
  presentPreconditions(preconditions);
  return typeof row === 'string' ? row : 'conditional';
}

/**
 * Whether a request's preconditions are enough to make `operation` safe to resend: `true` for
 * an always-idempotent operation, `false` for a never-idempotent one, and for a conditional one
 * whether one of the preconditions its row lists is present (`objects.insert` / `copy` /
 * `compose` / `rewrite`: `ifGenerationMatch`, `0` included; `objects.delete`: that or
 * `generation`; bucket and object `patch` / `update`: `ifMetagenerationMatch` or `etag`;
 * `buckets.setIamPolicy`, `hmacKeys.update`: `etag`).
 *
 * Preconditions are validated even when they do not matter. Unrelated fields
 * (`ifGenerationNotMatch`, `ifSourceGenerationMatch`, …) are ignored, but a near-miss
 * spelling of a known field (`IfGenerationMatch`, `if_generation_match`) throws.
 *
 * @example
 * gcsPreconditionMet('objects.insert', { ifGenerationMatch: 0 }); // true: create-if-absent
 * gcsPreconditionMet('objects.insert', {});                       // false
 *
 * @throws {TypeError} for an unknown operation, preconditions that are not an object, a
 *   field of the wrong type, or a misspelled field name.
 * @throws {RangeError} for a generation-like field that is not a non-negative 64-bit integer.
 */
export function gcsPreconditionMet(operation: GcsOperation, preconditions: GcsPreconditions | undefined): boolean {
  const row: (typeof GCS_TABLE)[GcsOperation] = GCS_TABLE[checkOperation(operation)];
  const present = presentPreconditions(preconditions);
  return typeof row === 'string' ? row === 'always' : row.some((field) => present.has(field));
}

/**
 * Whether a failed Cloud Storage request may be retried, from the operation's class, the
 * request's preconditions and the caller's strategy:
 *
 * | strategy        | always | conditional                | never |
 * | --------------- | ------ | -------------------------- | ----- |
 * | `'always'`      | true   | true                       | true  |
 * | `'conditional'` | true   | {@link gcsPreconditionMet} | false |
 * | `'never'`       | false  | false                      | false |
 *
 * The operation and preconditions are validated under every strategy.
 *
 * @example
 * gcsIsIdempotent('objects.delete', { generation: '1700000000000000' }, 'conditional'); // true
 * gcsIsIdempotent('hmacKeys.create', undefined, 'always');                             // true
 *
 * @throws {TypeError} for an unknown strategy, plus everything {@link gcsPreconditionMet} throws.
 */
export function gcsIsIdempotent(operation: GcsOperation, preconditions: GcsPreconditions | undefined, strategy: GcsRetryStrategy): boolean {
  const chosen = checkStrategy(strategy);
  const met = gcsPreconditionMet(operation, preconditions);
  return chosen === 'conditional' ? met : chosen === 'always';
}

const STRATEGIES: readonly GcsRetryStrategy[] = ['always', 'conditional', 'never'];
const FIELDS: readonly PreconditionField[] = ['ifGenerationMatch', 'ifMetagenerationMatch', 'etag', 'generation'];
// Generations are int64 in the API; anything larger cannot name a real object version.
const INT64_MAX = 9223372036854775807n;

const didYouMean = (hint: string | undefined): string => (hint === undefined ? '' : `did you mean ${hint}?`);

/**
 * True for a {@link GcsRetryStrategy}: the rule of gcs()'s `strategy` option.
 *
 * @internal
 */
export function isGcsStrategy(value: unknown): value is GcsRetryStrategy {
  return STRATEGIES.includes(value as GcsRetryStrategy);
}

/**
 * Returns `strategy` as a {@link GcsRetryStrategy}, or throws a TypeError that names the valid
 * ones (and the nearest to a misspelled one), for {@link gcsIsIdempotent}'s argument.
 */
function checkStrategy(strategy: unknown): GcsRetryStrategy {
  if (isGcsStrategy(strategy)) return strategy;
  const hint = didYouMean(typeof strategy === 'string' ? suggest(strategy, STRATEGIES) : undefined);
  throw new TypeError(
    `Unknown Cloud Storage retry strategy ${describe(strategy)}: expected 'always', 'conditional' or 'never'${hint && `; ${hint}`}`,
  );
}

/** Returns `value` as a known operation, or throws a TypeError that helps fix it. */
function checkOperation(value: unknown): GcsOperation {
  if (typeof value !== 'string') {
    throw new TypeError(`Cloud Storage operation must be a string such as 'objects.get'; got ${describe(value)}`);
  }
  // Object.hasOwn, not `in`: 'toString' or '__proto__' must not pass as operations.
  if (Object.hasOwn(GCS_TABLE, value)) return value as GcsOperation;
  const hint = didYouMean(suggest(value, GCS_OPERATIONS, normalizeOperation));
  throw new TypeError(
    `Unknown Cloud Storage operation ${describe(value)}: ${hint || `expected a JSON API method name such as 'objects.get' or 'buckets.setIamPolicy'${resourceHint(value)}`}`,
  );
}

/*
 * Canonical form of a possibly misspelled operation: case, underscores and dashes do not count
 * (`buckets.get_iam_policy`), nor do the discovery document's prefixes (`storage.objects.get`,
 * `projects.hmacKeys.create`) that people copy from other docs.
 */
function normalizeOperation(name: string): string {
  return normalizeName(name)
    .replace(/^storage\./, '')
    .replace(/^projects\./, '');
}

const resourceOf = (operation: string): string => operation.slice(0, operation.lastIndexOf('.'));

/** When the resource is right but the method is not, list what the resource offers. */
function resourceHint(name: string): string {
  const normalized = normalizeOperation(name);
  if (!normalized.includes('.')) return '';
  const methods = GCS_OPERATIONS.filter((op) => normalizeName(resourceOf(op)) === resourceOf(normalized));
  const first = methods[0];
  return first === undefined ? '' : `; ${resourceOf(first)} has ${methods.map((op) => op.slice(op.lastIndexOf('.') + 1)).join(', ')}`;
}

/**
 * Validates a preconditions bag and returns the fields that are present (set, not null, and
 * for `etag` non-empty). `undefined` and `null` mean "no preconditions". Own fields only:
 * `Object.prototype.ifGenerationMatch = 0` must not make a write look safe.
 */
function presentPreconditions(preconditions: unknown): ReadonlySet<PreconditionField> {
  const present = new Set<PreconditionField>();
  if (preconditions === undefined || preconditions === null) return present;
  // A Map or an array has no precondition fields: reading none would silently turn retries off.
  const bag = ownFields('Cloud Storage preconditions', preconditions);
  for (const key of Object.keys(bag)) {
    const value = bag[key];
    if (!FIELDS.includes(key as PreconditionField)) {
      // A misspelled precondition would be ignored and quietly turn retries off. Genuinely
      // different ones (ifGenerationNotMatch, ifSourceGenerationMatch) are further away.
      const hint = suggest(key, FIELDS);
      if (hint !== undefined) {
        throw new TypeError(`Cloud Storage preconditions has an unknown field ${describe(key)}: ${didYouMean(hint)}`);
      }
    } else if (value !== undefined && value !== null && (key === 'etag' ? checkEtag(value) : checkGeneration(key, value))) {
      present.add(key as PreconditionField);
    }
  }
  return present;
}

function checkEtag(value: unknown): boolean {
  if (typeof value !== 'string') throw new TypeError(`Cloud Storage precondition etag must be a string; got ${describe(value)}`);
  return value.length > 0;
}

/**
 * Accepts a non-negative int64 as a safe-integer number, a decimal string or a bigint. A number
 * past 2^53 has already lost digits, and a precondition on the wrong generation is worse than
 * none, so the message says to pass such a generation as a string or bigint.
 */
function checkGeneration(field: string, value: unknown): true {
  const type = typeof value;
  const valid =
    type === 'number'
      ? Number.isSafeInteger(value) && (value as number) >= 0
      : (type === 'string' || type === 'bigint') && /^\d+$/.test(String(value)) && BigInt(value as string) <= INT64_MAX;
  if (!valid) {
    const Type = type === 'number' || type === 'string' || type === 'bigint' ? RangeError : TypeError;
    throw new Type(
      `Cloud Storage precondition ${field} must be a non-negative integer: a number up to Number.MAX_SAFE_INTEGER ` +
        `(past it digits are lost: pass a string or bigint), a decimal string or a bigint; got ${describe(value)}`,
    );
  }
  return true;
}
