/**
 * The retry budget: gRPC's retry throttling (gRFC A6) as a token bucket that many `retry()`
 * calls share. Failures drain it, successes refill it slowly, and while it is at or below half
 * full no call retries. A fleet thus stops multiplying its load during an outage, yet keeps
 * retrying the occasional failure of a healthy server.
 */
import { type FieldRules, readChecked, isFiniteNumber } from '../util/check.js';
import type { RetryBudget } from '../types.js';

/**
 * Options of {@link createRetryBudget}; both follow gRPC's `retryThrottling` service config.
 *
 * @example
 * // A bigger bucket that refills faster: tolerates bursts of failures, one in five attempts.
 * const budget = createRetryBudget({ maxTokens: 100, tokenRatio: 0.2 });
 */
export interface RetryBudgetOptions {
  /** Size of the bucket, and its initial content. In (0, 1000]; default 10. */
  maxTokens?: number;
  /** Tokens a success gives back; at least 0.001 (three decimals are kept); default 0.1. */
  tokenRatio?: number;
}

/**
 * A {@link RetryBudget} whose state can be read, e.g. to export it as a metric.
 *
 * @example
 * const budget = createRetryBudget();
 * setInterval(() => metrics.gauge('storage.retry_tokens', budget.tokens), 10_000);
 */
export interface RetryTokenBudget extends RetryBudget {
  /** Tokens in the bucket now, in [0, maxTokens]. */
  readonly tokens: number;
  /** The bucket's size. */
  readonly maxTokens: number;
  /** Tokens a success gives back. */
  readonly tokenRatio: number;
}

/** gRPC's defaults: retries stop once about one attempt in ten fails. */
const DEFAULT_MAX_TOKENS = 10;
const DEFAULT_TOKEN_RATIO = 0.1;
/** gRPC rejects a larger bucket (a service config must not make a client retry without limit). */
const MAX_MAX_TOKENS = 1000;

/**
 * Creates a retry budget with gRPC's retry-throttling semantics (gRFC A6). Give the same
 * budget to every call to one server (`retry(fn, { budget })`):
 *
 * - the bucket starts full, with `maxTokens` tokens;
 * - every attempt that fails with a transient error takes 1 token (never below 0);
 * - every success gives back `tokenRatio` tokens (never above `maxTokens`);
 * - a retry is allowed only while the bucket holds more than `maxTokens / 2`; a refused retry
 *   makes `retry()` reject with `RetryError` reason `'budget'`, its `cause` the last error.
 *
 * With the defaults the bucket stays full while failures stay under one per ten successes
 * (the tokenRatio), so a healthy server's occasional failure is always retried; in an outage
 * a full budget lets through four retries in all (10 tokens down to 5), then first attempts
 * only, so the load a fleet sends stays near 1× instead of `maxAttempts`×. Tokens are counted in thousandths, as gRPC does, so 0.1 added ten times is
 * exactly 1.
 *
 * Throws a `RangeError`/`TypeError` naming the option for `maxTokens` outside (0, 1000],
 * `tokenRatio` below 0.001 (zero or negative), a non-number, or an unknown option.
 *
 * @example
 * const budget = createRetryBudget(); // one per server, shared by every call to it
 * const user = await retry(() => getUser(id), { budget, maxAttempts: 4 });
 */
export function createRetryBudget(options: RetryBudgetOptions = {}): RetryTokenBudget {
  const { maxTokens, tokenRatio } = readBudgetOptions(options);
  const maxMilli = Math.round(maxTokens * 1000);
  const ratioMilli = Math.round(tokenRatio * 1000);
  const thresholdMilli = maxMilli / 2;
  let milli = maxMilli;
  return {
    get tokens() {
      return milli / 1000;
    },
    maxTokens: maxMilli / 1000,
    tokenRatio: ratioMilli / 1000,
    record(success: boolean): void {
      if (success) milli = Math.min(maxMilli, milli + ratioMilli);
      else milli = Math.max(0, milli - 1000);
    },
    canRetry(): boolean {
      return milli > thresholdMilli;
    },
  };
}

/** The options of createRetryBudget(); thousandths are the unit, so 0.001 is the smallest bucket and refund. */
const RULES: FieldRules = {
  maxTokens: {
    ok: (v) => typeof v === 'number' && v >= 0.001 && v <= MAX_MAX_TOKENS,
    rule: `be a number > 0 and <= ${MAX_MAX_TOKENS} (at least 0.001)`,
    range: true,
  },
  tokenRatio: {
    ok: (v) => isFiniteNumber(v) && v >= 0.001,
    rule: 'be a finite number > 0 (at least 0.001; three decimals are kept)',
    range: true,
  },
};

function readBudgetOptions(options: unknown): Required<RetryBudgetOptions> {
  const { maxTokens = DEFAULT_MAX_TOKENS, tokenRatio = DEFAULT_TOKEN_RATIO } = readChecked(
    'createRetryBudget',
    options,
    RULES,
  ) as RetryBudgetOptions;
  return { maxTokens, tokenRatio };
}
