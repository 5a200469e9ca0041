/**
 * When a set of `retry()` options must be read again, and when the config made of it before
 * still holds: a frozen object (every preset returns one) is read once and remembered, and an
 * unfrozen one (most often a literal written in the call, a new object each time) is compared
 * with the last one read. Reading itself is options.ts's.
 */
import type { RetryOptions } from '../types.js';
import { INSTANT } from '../util/check.js';
import { type LiteralMemo, holdsLiteral, rememberLiteral } from '../util/literal-memo.js';
import { DEFAULT_CONFIG, type RetryConfig, checkFields, configOf, validateOptions } from './options.js';

// Frozen option objects (every preset returns one) are read once and remembered; the last
// one used is also kept aside, since a program tends to reuse the same preset call after call.
const readFrozen = new WeakMap<object, RetryConfig>();
let lastFrozen: object | undefined;
let lastConfig: RetryConfig;

/**
 * Validates `options` and fills in defaults. Throws a TypeError/RangeError naming the bad
 * option, under `where`: the entry point the options were given to (`retry`, or a preset such
 * as `iam`, which validates what it builds once, here, so the retry() it is passed to skips the
 * work), and `path`, what that entry point calls them (`options`, or `target`).
 */
export function readOptions(options: RetryOptions, where = 'retry', path = 'options'): RetryConfig {
  // Stryker disable next-line ConditionalExpression: equivalent when false (the WeakMap below gives the same config); true is the EqualityOperator mutant's case, still tested
  if (options === lastFrozen) return lastConfig;
  // Checked first: an unfrozen object may have changed since, so it is compared, not remembered.
  if (!Object.isFrozen(options)) return readLiteral(options, where, path);
  let config = readFrozen.get(options);
  if (config === undefined) {
    config = validateOptions(options, where, path);
    readFrozen.set(options, config);
  }
  lastFrozen = options;
  lastConfig = config;
  return config;
}

/**
 * The last unfrozen options object read (most often a literal written in the call, a new object
 * each time: `retry(fn, { maxAttempts: 5 })`), as util/literal-memo.ts remembers it, and the
 * config made of it, which names the entry point it was read for (`where`). At first, `{}` and
 * the default config.
 */
const lastLiteral: LiteralMemo = [];
let literalConfig: RetryConfig = DEFAULT_CONFIG;

/**
 * `options` read afresh, unless it holds the same keys, in the same order, with the same values
 * (`===`) as the last literal read for the same `where`: then that literal's config,
 * which reading it again would rebuild field for field. Compared by value each time, so an
 * object changed between calls is read again; not remembered when its config copies fields out
 * of an object it holds (`backoff`, a growing `attemptTimeoutMs`) that is not frozen, since that
 * object may change under the same reference.
 */
function readLiteral(options: RetryOptions, where: string, path: string): RetryConfig {
  // The path only names the options in errors; a config that passed holds nothing of it.
  if (literalConfig.where === where && holdsLiteral(lastLiteral, options)) return literalConfig;
  const fields = checkFields(options, where, path);
  const config = configOf(fields, options, where, path);
  // The values come from `fields`, as read once by the check (a getter is not called again).
  // Object.isFrozen() is true of anything but an object that can still change.
  if (
    (options as { [INSTANT]?: unknown })[INSTANT] === undefined &&
    Object.isFrozen(fields.backoff) &&
    Object.isFrozen(fields.attemptTimeoutMs)
  ) {
    rememberLiteral(lastLiteral, options, fields);
    literalConfig = config;
  }
  return config;
}
