/**
 * Which Cloud Storage requests are safe to send twice.
 *
 * Retrying is only harmless when a request is idempotent: sending it again must not leave
 * the bucket, object or key in a different state than sending it once. Cloud Storage's
 * retry-strategy page sorts its JSON API methods into three groups (always, conditionally,
 * never idempotent); this file holds that sorting as data and answers the two questions a
 * retry loop asks: "what kind of operation is this?" and "may I resend it, given the
 * preconditions this particular request carries?".
 *
 * Everything here is pure: no I/O, no clock, no state.
 *
 * @module
 */

/**
 * A Cloud Storage JSON API method, spelled as the API reference names it
 * (`resource.method`, e.g. `objects.insert`). The `projects.` part of
 * `projects.hmacKeys.*` and `projects.serviceAccount.get` is left out, as the reference's
 * page titles do.
 *
 * Only methods the idempotency table in the retry-strategy documentation classifies are
 * listed; see {@link GCS_OPERATIONS} for the runtime list.
 *
 * @example
 * const operation: GcsOperation = 'objects.insert';
 * gcs({ operation, preconditions: { ifGenerationMatch: 0 } });
 */
export type GcsOperation =
  | 'buckets.get'
  | 'buckets.list'
  | 'buckets.insert'
  | 'buckets.delete'
  | 'buckets.patch'
  | 'buckets.update'
  | 'buckets.getIamPolicy'
  | 'buckets.setIamPolicy'
  | 'buckets.testIamPermissions'
  | 'buckets.lockRetentionPolicy'
  | 'objects.get'
  | 'objects.list'
  | 'objects.insert'
  | 'objects.copy'
  | 'objects.compose'
  | 'objects.rewrite'
  | 'objects.delete'
  | 'objects.patch'
  | 'objects.update'
  | 'hmacKeys.get'
  | 'hmacKeys.list'
  | 'hmacKeys.create'
  | 'hmacKeys.update'
  | 'hmacKeys.delete'
  | 'notifications.get'
  | 'notifications.list'
  | 'notifications.insert'
  | 'notifications.delete'
  | 'bucketAccessControls.get'
  | 'bucketAccessControls.list'
  | 'bucketAccessControls.insert'
  | 'bucketAccessControls.delete'
  | 'bucketAccessControls.patch'
  | 'bucketAccessControls.update'
  | 'objectAccessControls.get'
  | 'objectAccessControls.list'
  | 'objectAccessControls.insert'
  | 'objectAccessControls.delete'
  | 'objectAccessControls.patch'
  | 'objectAccessControls.update'
  | 'defaultObjectAccessControls.get'
  | 'defaultObjectAccessControls.list'
  | 'defaultObjectAccessControls.insert'
  | 'defaultObjectAccessControls.delete'
  | 'defaultObjectAccessControls.patch'
  | 'defaultObjectAccessControls.update'
  | 'serviceAccount.get';

/**
 * The request preconditions that can turn a conditionally idempotent operation into an
 * idempotent one. Names follow the JSON API query parameters. Generation numbers are 64-bit
 * integers, so besides a `number` (up to `Number.MAX_SAFE_INTEGER`) they may be given as a
 * decimal string or a `bigint`. A field set to `undefined` or `null` counts as absent.
 *
 * @example
 * const createIfAbsent: GcsPreconditions = { ifGenerationMatch: 0 };
 * const thatVersion: GcsPreconditions = { generation: '1700000000000001' };
 */
export interface GcsPreconditions {
  /**
   * Apply the request only if the object's current generation equals this value. `0` is
   * meaningful: "only if no live object exists yet", which makes a create safe to resend.
   * For `objects.copy` / `objects.rewrite` it is the destination's generation.
   */
  ifGenerationMatch?: number | string | bigint;
  /**
   * Apply the request only if the bucket's or object's metadata generation equals this
   * value, so a resent patch cannot overwrite someone else's later change.
   */
  ifMetagenerationMatch?: number | string | bigint;
  /**
   * The resource's ETag, sent as an HTTP precondition or in the request body (an IAM
   * policy's or HMAC key's `etag`). An empty string counts as absent.
   */
  etag?: string;
  /**
   * The exact object generation (version) a request addresses. Naming a version makes
   * `objects.delete` idempotent: that version can only be deleted once.
   */
  generation?: number | string | bigint;
}

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
export type GcsRetryStrategy = 'always' | 'conditional' | 'never';

/*
 * The table itself. `satisfies Record<GcsOperation, GcsIdempotency>` makes the compiler
 * reject a missing, misspelled or extra operation; `as const` keeps each row's literal class
 * so the conditional rows can be picked out by type below.
 */
const IDEMPOTENCY = {
  // Buckets. The "Retry strategy" page: all get and list requests; inserting or deleting buckets; testing bucket
  // IAM permissions; locking retention policies are always idempotent. Updates and patches
  // need ifMetagenerationMatch or an ETag; setting the IAM policy needs its etag.
  'buckets.get': 'always',
  'buckets.list': 'always',
  'buckets.insert': 'always',
  'buckets.delete': 'always',
  'buckets.getIamPolicy': 'always',
  'buckets.testIamPermissions': 'always',
  'buckets.lockRetentionPolicy': 'always',
  'buckets.patch': 'conditional',
  'buckets.update': 'conditional',
  'buckets.setIamPolicy': 'conditional',

  // Objects. The "Retry strategy" page: get and list are always idempotent; insert, copy, compose and rewrite
  // need ifGenerationMatch; delete needs ifGenerationMatch or a generation number; update
  // and patch need ifMetagenerationMatch or an ETag.
  'objects.get': 'always',
  'objects.list': 'always',
  'objects.insert': 'conditional',
  'objects.copy': 'conditional',
  'objects.compose': 'conditional',
  'objects.rewrite': 'conditional',
  'objects.delete': 'conditional',
  'objects.patch': 'conditional',
  'objects.update': 'conditional',

  // HMAC keys. The "Retry strategy" page: deleting is always idempotent, updating needs an ETag, creating never
  // is (each call mints a new key).
  'hmacKeys.get': 'always',
  'hmacKeys.list': 'always',
  'hmacKeys.delete': 'always',
  'hmacKeys.update': 'conditional',
  'hmacKeys.create': 'never',

  // Pub/Sub notifications. The "Retry strategy" page: deleting is always idempotent, creating never is (each call
  // gets a new notification ID).
  'notifications.get': 'always',
  'notifications.list': 'always',
  'notifications.delete': 'always',
  'notifications.insert': 'never',

  // Access control lists. The "Retry strategy" page: creating, deleting, patching or updating bucket ACLs, object
  // ACLs and default object ACLs is never idempotent; reading them falls under "all get and
  // list requests".
  'bucketAccessControls.get': 'always',
  'bucketAccessControls.list': 'always',
  'bucketAccessControls.insert': 'never',
  'bucketAccessControls.delete': 'never',
  'bucketAccessControls.patch': 'never',
  'bucketAccessControls.update': 'never',
  'objectAccessControls.get': 'always',
  'objectAccessControls.list': 'always',
  'objectAccessControls.insert': 'never',
  'objectAccessControls.delete': 'never',
  'objectAccessControls.patch': 'never',
  'objectAccessControls.update': 'never',
  'defaultObjectAccessControls.get': 'always',
  'defaultObjectAccessControls.list': 'always',
  'defaultObjectAccessControls.insert': 'never',
  'defaultObjectAccessControls.delete': 'never',
  'defaultObjectAccessControls.patch': 'never',
  'defaultObjectAccessControls.update': 'never',

  // Project service account. The "Retry strategy" page: a get request, so always idempotent.
  'serviceAccount.get': 'always',
} as const satisfies Record<GcsOperation, GcsIdempotency>;

/** The operations whose row says `'conditional'`, derived from the table. */
type ConditionalOperation = {
  [K in GcsOperation]: (typeof IDEMPOTENCY)[K] extends 'conditional' ? K : never;
}[GcsOperation];

type PreconditionField = keyof GcsPreconditions;

/*
 * For each conditional operation, the preconditions of which any one makes it idempotent.
 * Typed by ConditionalOperation so the compiler insists every conditional row has a rule
 * and no other row sneaks one in. Fields not listed do not help: a bucket has no object
 * generation, and ifSourceGenerationMatch on a copy guards the source, not the write.
 */
const MAKES_IDEMPOTENT: Record<ConditionalOperation, readonly PreconditionField[]> = {
  'buckets.patch': ['ifMetagenerationMatch', 'etag'],
  'buckets.update': ['ifMetagenerationMatch', 'etag'],
  'buckets.setIamPolicy': ['etag'],
  'objects.insert': ['ifGenerationMatch'],
  'objects.copy': ['ifGenerationMatch'],
  'objects.compose': ['ifGenerationMatch'],
  'objects.rewrite': ['ifGenerationMatch'],
  'objects.delete': ['ifGenerationMatch', 'generation'],
  'objects.patch': ['ifMetagenerationMatch', 'etag'],
  'objects.update': ['ifMetagenerationMatch', 'etag'],
  'hmacKeys.update': ['etag'],
};

/**
 * Every operation the table classifies, in table order (grouped by resource). Frozen, so it
 * can be shared safely; handy for documentation and for exhaustive tests.
 *
 * @example
 * GCS_OPERATIONS.filter((op) => gcsIdempotency(op) === 'never'); // ['hmacKeys.create', …]
 */
export const GCS_OPERATIONS: readonly GcsOperation[] = /* @__PURE__ */ Object.freeze(
  /* @__PURE__ */ Object.keys(IDEMPOTENCY) as GcsOperation[],
);

/**
 * The idempotency class of a Cloud Storage JSON API operation, as the retry-strategy
 * documentation gives it.
 *
 * A misspelled name throws rather than falling back to a default: guessing `'never'` would
 * silently disable retries, guessing `'always'` could duplicate writes.
 *
 * `preconditions` is accepted (the signature DESIGN.md gives) and validated like
 * {@link gcsPreconditionMet} does, so a bad value fails here too, but it does not change the
 * answer: the class belongs to the operation. Whether a request's preconditions make a
 * `'conditional'` operation safe is {@link gcsPreconditionMet}'s question.
 *
 * @example
 * gcsIdempotency('objects.get');     // 'always'
 * gcsIdempotency('objects.insert');  // 'conditional'
 * gcsIdempotency('objects.insert', { ifGenerationMatch: 0 }); // still 'conditional'
 * gcsIdempotency('hmacKeys.create'); // 'never'
 *
 * @throws {TypeError} if `operation` is not one of {@link GCS_OPERATIONS} (the message
 *   suggests the nearest valid name when there is one), or for malformed preconditions.
 * @throws {RangeError} for a generation-like precondition that is not a non-negative int64.
 */
export function gcsIdempotency(operation: GcsOperation, preconditions?: GcsPreconditions): GcsIdempotency {
  const op = checkOperation(operation);
  presentPreconditions(preconditions);
  return IDEMPOTENCY[op];
}

/**
 * Whether a request's preconditions are enough to make `operation` safe to resend.
 *
 * For a conditional operation this checks that one of the preconditions that makes it
 * idempotent is present:
 * - `objects.insert` / `copy` / `compose` / `rewrite`: `ifGenerationMatch` (`0` counts);
 * - `objects.delete`: `ifGenerationMatch` or `generation`;
 * - `buckets.patch` / `update`, `objects.patch` / `update`: `ifMetagenerationMatch` or `etag`;
 * - `buckets.setIamPolicy`, `hmacKeys.update`: `etag`.
 *
 * An always-idempotent operation needs nothing, so the answer is `true`; a never-idempotent
 * one cannot be rescued by any precondition, so it is `false`.
 *
 * Preconditions are validated even when they do not matter, so a bad value is caught on
 * the first call rather than on the one request where it would count. Unrelated fields
 * (`ifGenerationNotMatch`, `ifSourceGenerationMatch`, …) are ignored, but a near-miss
 * spelling of a known field (`IfGenerationMatch`, `if_generation_match`) throws.
 *
 * @example
 * gcsPreconditionMet('objects.insert', { ifGenerationMatch: 0 }); // true: create-if-absent
 * gcsPreconditionMet('objects.insert', {});                       // false
 *
 * @throws {TypeError} for an unknown operation, preconditions that are not an object, a
 *   field of the wrong type, or a misspelled field name.
 * @throws {RangeError} for a generation-like field that is not a non-negative 64-bit
 *   integer (NaN, negative, fractional, beyond `Number.MAX_SAFE_INTEGER` as a number, …).
 */
export function gcsPreconditionMet(
  operation: GcsOperation,
  preconditions: GcsPreconditions | undefined,
): boolean {
  const op = checkOperation(operation);
  const present = presentPreconditions(preconditions);
  const idempotency = IDEMPOTENCY[op];
  if (idempotency === 'always') return true;
  if (idempotency === 'never') return false;
  return MAKES_IDEMPOTENT[op as ConditionalOperation].some((field) => present.has(field));
}

/**
 * Whether a failed Cloud Storage request may be retried, combining the operation's class,
 * the request's preconditions and the caller's strategy:
 *
 * | strategy        | always | conditional                | never |
 * | --------------- | ------ | -------------------------- | ----- |
 * | `'always'`      | true   | true                       | true  |
 * | `'conditional'` | true   | {@link gcsPreconditionMet} | false |
 * | `'never'`       | false  | false                      | false |
 *
 * The operation and preconditions are validated under every strategy, so a typo fails
 * loudly even when the strategy makes the answer obvious.
 *
 * @example
 * gcsIsIdempotent('objects.delete', { generation: '1700000000000000' }, 'conditional'); // true
 * gcsIsIdempotent('objects.delete', undefined, 'conditional');                         // false
 * gcsIsIdempotent('hmacKeys.create', undefined, 'always');                             // true
 *
 * @throws {TypeError} for an unknown strategy, plus everything {@link gcsPreconditionMet}
 *   throws.
 */
export function gcsIsIdempotent(
  operation: GcsOperation,
  preconditions: GcsPreconditions | undefined,
  strategy: GcsRetryStrategy,
): boolean {
  const chosen = checkStrategy(strategy);
  const met = gcsPreconditionMet(operation, preconditions);
  switch (chosen) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'conditional':
      return met;
  }
}

// ---------------------------------------------------------------------------------------
// Validation helpers (not exported).

const STRATEGIES: readonly GcsRetryStrategy[] = ['always', 'conditional', 'never'];

const PRECONDITION_FIELDS: readonly PreconditionField[] = [
  'ifGenerationMatch',
  'ifMetagenerationMatch',
  'etag',
  'generation',
];

// Generations are int64 in the API; anything larger cannot name a real object version.
const INT64_MAX = 9223372036854775807n;

/**
 * Returns `strategy` as a {@link GcsRetryStrategy}, or throws a TypeError that names the
 * valid ones. Used by the `gcs()` preset; not part of the public API.
 *
 * @internal
 */
export function checkStrategy(strategy: unknown): GcsRetryStrategy {
  if ((STRATEGIES as readonly unknown[]).includes(strategy)) {
    return strategy as GcsRetryStrategy;
  }
  const hint =
    typeof strategy === 'string' ? suggest(strategy, STRATEGIES, normalizeName) : undefined;
  throw new TypeError(
    `Unknown Cloud Storage retry strategy ${describe(strategy)}: expected 'always', ` +
      `'conditional' or 'never'${hint === undefined ? '' : `; did you mean ${hint}?`}`,
  );
}

/** Returns `value` as a known operation, or throws a TypeError that helps fix it. */
function checkOperation(value: unknown): GcsOperation {
  if (typeof value !== 'string') {
    throw new TypeError(
      `Cloud Storage operation must be a string such as 'objects.get'; got ${describe(value)}`,
    );
  }
  // Object.hasOwn, not `in`: 'toString' or '__proto__' must not pass as operations.
  if (Object.hasOwn(IDEMPOTENCY, value)) return value as GcsOperation;

  const hint = suggest(value, GCS_OPERATIONS, normalizeOperation);
  if (hint !== undefined) {
    throw new TypeError(
      `Unknown Cloud Storage operation ${describe(value)}: did you mean ${hint}?`,
    );
  }
  throw new TypeError(
    `Unknown Cloud Storage operation ${describe(value)}: expected a JSON API method name ` +
      `such as 'objects.get' or 'buckets.setIamPolicy'${resourceHint(value)}`,
  );
}

/*
 * Canonical form for comparing a misspelled operation: case, underscores and dashes are
 * ignored (`buckets.get_iam_policy`), and so are the discovery-document prefixes
 * (`storage.objects.get`, `projects.hmacKeys.create`) that people copy from other docs.
 */
function normalizeOperation(name: string): string {
  return normalizeName(name).replace(/^storage\./, '').replace(/^projects\./, '');
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[_\-\s]/g, '');
}

/** When the resource is right but the method is not, list what the resource offers. */
function resourceHint(name: string): string {
  const normalized = normalizeOperation(name);
  const dot = normalized.lastIndexOf('.');
  if (dot < 0) return '';
  const resource = normalized.slice(0, dot);
  const methods = GCS_OPERATIONS.filter(
    (op) => normalizeName(op.slice(0, op.lastIndexOf('.'))) === resource,
  );
  const first = methods[0];
  if (first === undefined) return '';
  const owner = first.slice(0, first.lastIndexOf('.'));
  const names = methods.map((op) => op.slice(op.lastIndexOf('.') + 1));
  return `; ${owner} has ${names.join(', ')}`;
}

/**
 * The candidate closest to `input` after normalization: an exact normalized match first,
 * otherwise the nearest within a small edit distance (one edit for very short names, two
 * otherwise, so that unrelated short words are not "corrected").
 */
function suggest<T extends string>(
  input: string,
  candidates: readonly T[],
  normalize: (name: string) => string,
): T | undefined {
  const wanted = normalize(input);
  let best: T | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, normalize(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = wanted.length <= 4 ? 1 : 2;
  return bestDistance <= allowed ? best : undefined;
}

/** Levenshtein distance with a single rolling row; inputs here are a few dozen chars. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      const deletion = (previous[j] ?? 0) + 1;
      const insertion = (current[j - 1] ?? 0) + 1;
      current.push(Math.min(substitution, deletion, insertion));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Validates a preconditions bag and returns the fields that are present (set, not null,
 * and for `etag` non-empty). `undefined` and `null` mean "no preconditions".
 */
function presentPreconditions(preconditions: unknown): ReadonlySet<PreconditionField> {
  const present = new Set<PreconditionField>();
  if (preconditions === undefined || preconditions === null) return present;
  // A Map or an array has no precondition fields: reading none would silently turn retries off.
  if (typeof preconditions !== 'object' || Object.prototype.toString.call(preconditions) !== '[object Object]') {
    throw new TypeError(
      `Cloud Storage preconditions must be an object or undefined; got ${describePreconditions(preconditions)}`,
    );
  }
  const bag = preconditions as Record<string, unknown>;
  rejectMisspelledFields(bag);

  for (const field of PRECONDITION_FIELDS) {
    // Own fields only: `Object.prototype.ifGenerationMatch = 0` must not make a write look safe.
    const value = Object.hasOwn(bag, field) ? bag[field] : undefined;
    if (value === undefined || value === null) continue;
    if (field === 'etag' ? checkEtag(value) : checkGeneration(field, value)) {
      present.add(field);
    }
  }
  return present;
}

/** describe() writes a Map as `{}`; name the kind of object instead. */
function describePreconditions(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return describe(value);
  return `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
}

/*
 * A misspelled precondition would be silently ignored and quietly turn retries off, so a
 * key that is only a casing, underscore or one-typo away from a known field is an error.
 * Genuinely different preconditions (ifGenerationNotMatch, ifSourceGenerationMatch) are
 * further away and pass through untouched.
 */
function rejectMisspelledFields(bag: Record<string, unknown>): void {
  for (const key of Object.keys(bag)) {
    if ((PRECONDITION_FIELDS as readonly string[]).includes(key)) continue;
    const hint = suggest(key, PRECONDITION_FIELDS, normalizeName);
    if (hint !== undefined) {
      throw new TypeError(
        `Cloud Storage preconditions has an unknown field ${describe(key)}: did you mean ${hint}?`,
      );
    }
  }
}

function checkEtag(value: unknown): boolean {
  if (typeof value !== 'string') {
    throw new TypeError(
      `Cloud Storage precondition etag must be a string; got ${describe(value)}`,
    );
  }
  return value.length > 0;
}

/** Accepts a non-negative int64 as a safe-integer number, a decimal string or a bigint. */
function checkGeneration(field: PreconditionField, value: unknown): true {
  const expected = 'a non-negative integer (number, decimal string or bigint)';
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(
        `Cloud Storage precondition ${field} must be ${expected}; got ${describe(value)}`,
      );
    }
    if (!Number.isSafeInteger(value)) {
      // Real generations are ~1.7e15 today but int64 in the API; past 2^53 a number has
      // already lost digits, and a precondition on the wrong generation is worse than none.
      throw new RangeError(
        `Cloud Storage precondition ${field} is beyond Number.MAX_SAFE_INTEGER and may have ` +
          `lost precision; pass it as a string or bigint; got ${describe(value)}`,
      );
    }
    return true;
  }
  if (typeof value === 'string') {
    if (!/^[0-9]+$/.test(value) || BigInt(value) > INT64_MAX) {
      throw new RangeError(
        `Cloud Storage precondition ${field} must be ${expected}; got ${describe(value)}`,
      );
    }
    return true;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > INT64_MAX) {
      throw new RangeError(
        `Cloud Storage precondition ${field} must be ${expected}; got ${describe(value)}`,
      );
    }
    return true;
  }
  throw new TypeError(
    `Cloud Storage precondition ${field} must be ${expected}; got ${describe(value)}`,
  );
}

/** A short, never-throwing rendering of any value for error messages. */
function describe(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return `${value}n`;
    case 'function':
      return `function ${value.name || '(anonymous)'}`;
    case 'object': // null too: JSON writes it as null
      if (Array.isArray(value)) return `array of length ${value.length}`;
      try {
        return JSON.stringify(value) ?? Object.prototype.toString.call(value);
      } catch {
        return Object.prototype.toString.call(value);
      }
    default:
      // number (NaN, -0, Infinity print readably), boolean, undefined, symbol
      return Object.is(value, -0) ? '-0' : String(value);
  }
}
