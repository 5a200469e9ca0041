/**
 * The script of `scriptedFetch`: what each entry may be, checked when the fetch is made, so a
 * misspelled entry fails where it was written, with the name it probably meant.
 */
import { type FieldRules, checkOptions, describe, isPlainObject, mustError } from '../util/check.js';
import { suggest } from '../util/suggest.js';
import { FETCH_RUNTIMES, type FetchRuntime, NETWORK_FAILURES, type NetworkFailure } from './network-failures.js';

/**
 * A scripted answer with a status: a real `Response` with that status, and optionally a
 * `Retry-After` (seconds, or a `Date`), headers, a body (any `BodyInit`; or `json`, sent as
 * JSON with its content type), and `breakAfter`: the body breaks after that many bytes, as
 * a dropped connection breaks it.
 *
 * @example
 * const step: StatusStep = { status: 429, retryAfter: 2 };
 */
export interface StatusStep {
  readonly status: number;
  readonly retryAfter?: number | Date;
  readonly headers?: HeadersInit;
  readonly body?: BodyInit | null;
  readonly json?: unknown;
  readonly breakAfter?: number;
}

/**
 * One entry of a `scriptedFetch` script: a status, a status with more, a network failure, `'hang'`
 * (no answer until the request is aborted), an error to reject with, or a function answering.
 *
 * @example
 * const script: ScriptStep[] = [503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 'hang', 200];
 */
export type ScriptStep = number | StatusStep | NetworkFailure | 'hang' | Error | ((request: Request) => Response | Promise<Response>);

const WORDS: readonly string[] = [...NETWORK_FAILURES, 'hang'];

/** Statuses a Response can be made with (the constructor refuses the others). */
const isStatus = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 200 && (v as number) <= 599;

// Stryker disable next-line StringLiteral: never shown: every value passes
const ANY = { ok: () => true, rule: 'be anything' };

const STEP_RULES: FieldRules = {
  status: { ok: isStatus, rule: 'be a whole number from 200 to 599', range: true },
  retryAfter: {
    ok: (v) => (typeof v === 'number' && v >= 0 && v < Infinity) || v instanceof Date,
    rule: 'be a number of seconds >= 0 or a Date',
  },
  headers: { ok: (v) => typeof v === 'object' && v !== null, rule: 'be headers (a Headers, an object or [name, value] pairs)' },
  body: ANY,
  json: ANY,
  breakAfter: { ok: (v) => Number.isSafeInteger(v) && (v as number) >= 0, rule: 'be a whole number of bytes >= 0', range: true },
};

/** The script, checked entry by entry, as a copy (a later change to the array changes nothing). */
export function checkScript(script: unknown): ScriptStep[] {
  if (!Array.isArray(script)) throw mustError('scriptedFetch: script', 'be an array of answers', script);
  return script.map((step: unknown, i) => {
    const where = `scriptedFetch: script[${i}]`;
    if (typeof step === 'number') {
      if (!isStatus(step)) throw mustError(where, 'be a status from 200 to 599', step, true);
    } else if (typeof step === 'string') {
      if (!WORDS.includes(step)) throw notOneOf(where, 'a status, or one of', WORDS, step);
    } else if (isPlainObject(step)) {
      checkOptions(where, step, STEP_RULES, undefined, 'entry');
      if (step.status === undefined) throw mustError(`${where}: entry.status`, 'be given', undefined);
      if (step.body !== undefined && step.json !== undefined) throw new TypeError(`${where}: give entry.body or entry.json, not both`);
    } else if (!(step instanceof Error) && typeof step !== 'function') {
      throw mustError(where, 'be a status, a network failure, "hang", an { status } object, an Error or a function', step);
    }
    return step as ScriptStep;
  });
}

/** The `runtime` option, checked; undefined when not given. */
export function checkRuntime(options: unknown): FetchRuntime | undefined {
  checkOptions('scriptedFetch', options, { runtime: ANY });
  const { runtime } = options as { runtime?: unknown };
  if (runtime === undefined || FETCH_RUNTIMES.includes(runtime as FetchRuntime)) return runtime as FetchRuntime | undefined;
  throw notOneOf('scriptedFetch: options.runtime', 'one of', FETCH_RUNTIMES, runtime);
}

/** `<subject> must be <what> "a", "b", got "x" (did you mean "a"?)`: a TypeError. */
function notOneOf(subject: string, what: string, words: readonly string[], value: unknown): TypeError {
  const near = typeof value === 'string' ? suggest(value, words) : undefined;
  const hint = near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
  return new TypeError(`${subject} must be ${what} ${words.map((word) => JSON.stringify(word)).join(', ')}, got ${describe(value)}${hint}`);
}
