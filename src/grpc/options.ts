/**
 * What `grpcRetryInterceptor()` is given, read by the one options reader: retry()'s options
 * (less the two a gRPC call brings or cannot use), for every method or chosen per method; and
 * the channel option that leaves tenacious the only retry layer.
 */
import { hintExceeds } from '../classify/error-shape.js';
import { isTransient } from '../classify/predicates.js';
import { RETRY_RULES, type RetryConfig, validateOptions } from '../core/options.js';
import type { RetryOptions } from '../types.js';
import { type FieldRules, MAX_RETRY_AFTER_RULE, checkOptions, isFunction, leftOut } from '../util/check.js';

/**
 * The options of the calls an interceptor retries: `retry()`'s, less `signal` (a call is
 * cancelled with `call.cancel()`, its own way) and `hedge` (an attempt is one call), plus
 * `maxRetryAfterMs`, as retryFetch, axios and TanStack Query take it. The value
 * `retryOnResult` judges is the response message.
 *
 * @example
 * const options: GrpcInterceptorOptions = { ...iam(), attemptTimeoutMs: 5_000, maxRetryAfterMs: 30_000 };
 */
export type GrpcInterceptorOptions = Omit<RetryOptions, 'signal' | 'hedge'> & {
  /**
   * The longest `grpc-retry-pushback-ms` worth waiting for, in milliseconds: a failure whose
   * pushback asks for longer is the call's answer at once. Default Infinity: only the deadline
   * limits it (a pushback that would end past the deadline is the answer at once too).
   */
  maxRetryAfterMs?: number;
};

/**
 * What `grpcRetryInterceptor()` takes: the options of every method's calls, or a function
 * of the method's path (`'/google.iam.v1.IAMPolicy/GetIamPolicy'`) that returns them, or
 * `undefined` to leave that method's calls alone.
 *
 * @example
 * const byMethod: GrpcInterceptorPolicy = (path) => (path.endsWith('/GetIamPolicy') ? iam() : undefined);
 */
export type GrpcInterceptorPolicy = GrpcInterceptorOptions | ((path: string) => GrpcInterceptorOptions | undefined);

/**
 * The channel options of a client whose calls tenacious retries: `'grpc.enable_retries': 0`
 * turns grpc-js's own retries off, those a service config's `retryPolicy` asks for (and a
 * service config can come from name resolution, unseen by you) and its transparent retries
 * alike, so that each attempt is one request. Spread it into the client's options.
 *
 * @example
 * const client = new EchoClient(address, credentials.createInsecure(), {
 *   ...NO_CHANNEL_RETRIES,
 *   interceptors: [grpcRetryInterceptor(iam())],
 * });
 */
export const NO_CHANNEL_RETRIES: { readonly 'grpc.enable_retries': 0 } = /* @__PURE__ */ Object.freeze({ 'grpc.enable_retries': 0 });

/** The name the interceptor's errors begin with. */
export const WHERE = 'grpcRetryInterceptor';

/** retry()'s rules, less the two options a gRPC call has its own way for. */
const RULES: FieldRules = {
  ...RETRY_RULES,
  signal: /* @__PURE__ */ leftOut('cancel the call with call.cancel(), or give it a deadline'),
  hedge: /* @__PURE__ */ leftOut('each attempt is one gRPC call'),
  maxRetryAfterMs: MAX_RETRY_AFTER_RULE,
};

/** A method's options as the engine takes them, checked, and what the engine made of them (its limits, its deadline). */
export interface MethodRetry {
  readonly options: RetryOptions;
  readonly config: RetryConfig;
}

/**
 * Reads `policy` into what a call of a method (by its path) is retried with, or undefined to
 * leave it alone. Options given as an object are checked now; a function's answers when a call
 * is made. Bad options throw a TypeError/RangeError naming the field.
 */
export function readPolicy(policy: GrpcInterceptorPolicy | undefined): (path: string) => MethodRetry | undefined {
  if (isFunction(policy)) {
    return (path) => {
      const options = policy(path);
      // Named as written: `grpcRetryInterceptor: policy("/pkg.Service/Method").maxAttempts must be …`.
      return options === undefined ? undefined : methodRetry(options, `policy(${JSON.stringify(path)})`);
    };
  }
  const retry = methodRetry(policy === undefined ? {} : policy, 'options');
  return () => retry;
}

function methodRetry(options: unknown, path: string): MethodRetry {
  checkOptions(WHERE, options, RULES, undefined, path);
  const { maxRetryAfterMs = Infinity, ...rest } = options as GrpcInterceptorOptions;
  // The cap is a retry policy (as retryFetch's and axios's): a failure asking for a longer pause
  // is not worth another attempt. The engine, which knows no such option, is given that policy.
  const engine: RetryOptions = { ...rest, retryable: capped(rest.retryable ?? isTransient, maxRetryAfterMs) };
  return { options: engine, config: validateOptions(engine, WHERE, path) };
}

function capped(retryable: NonNullable<RetryOptions['retryable']>, maxRetryAfterMs: number): NonNullable<RetryOptions['retryable']> {
  return (error, ctx) => !hintExceeds(error, maxRetryAfterMs) && retryable(error, ctx);
}
