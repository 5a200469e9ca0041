/**
 * gRPC service configs (the "Service Config in gRPC" document, grpc/grpc doc/service_config.md,
 * and gRFC A6 "gRPC Retry Design"), read into tenacious's options: a method's `retryPolicy` or
 * `hedgingPolicy` and `timeout`, and the channel's `retryThrottling` as one retry budget. The
 * whole document is checked when it is read; every error names its path in the document.
 */
import { readOptions } from '../core/read-options.js';
import { type RetryTokenBudget, createRetryBudget } from '../fleet/budget.js';
import type { AttemptMode, BackoffPolicy, RetryOptions, RetryPredicate } from '../types.js';
import { describe, mustError } from '../util/check.js';
import { docError, lookUp, pathOf, readFields, readNumber } from './config-doc.js';
import { type MethodPolicy, methodPolicy, readMethodFields } from './grpc-method-policy.js';

/**
 * A gRPC method by its fully qualified service name and its method name, as a service config's
 * `methodConfig[].name[]` writes them.
 *
 * @example
 * const name: GrpcMethodName = { service: 'google.pubsub.v1.Publisher', method: 'Publish' };
 */
export interface GrpcMethodName {
  readonly service: string;
  /** Absent or `''`: the service-wide entry, then the default. */
  readonly method?: string;
}

/**
 * How a service config is read.
 *
 * @example
 * const config = readGrpcServiceConfig(json, { maxAttemptsLimit: Infinity }); // the document's counts, uncapped
 */
export interface GrpcServiceConfigOptions {
  /**
   * The most attempts a policy may ask for, as grpc-js's `grpc-node.retry_max_attempts_limit`:
   * gRFC A6 has clients treat any `maxAttempts` above 5 as 5, and so does tenacious by default,
   * so a call makes the attempts grpc-js would. `Infinity` takes the document's values.
   */
  readonly maxAttemptsLimit?: number;
}

/**
 * A method's options from a service config: frozen, checked by `retry()`'s validator, every
 * choice present. `backoff` for a `retryPolicy`, `hedge` for a `hedgingPolicy`, `budget` when the
 * document has `retryThrottling` (the same budget for every method of one read).
 *
 * @example
 * const options: GrpcRetryOptions = fromGrpcServiceConfig(json, { service: 'echo.Echo', method: 'Say' });
 * options.maxAttempts; // 5
 */
export interface GrpcRetryOptions extends Readonly<RetryOptions> {
  readonly maxAttempts: number;
  /** The method config's `timeout`; `Infinity` without one (then `maxAttempts` ends the call). */
  readonly deadlineMs: number;
  /** True for the policy's `retryableStatusCodes` (or hedging's `nonFatalStatusCodes`), read by `grpcCodeOf`. */
  readonly retryable: RetryPredicate;
  readonly backoff?: Readonly<BackoffPolicy>;
  readonly hedge?: AttemptMode;
  readonly budget?: RetryTokenBudget;
}

/**
 * A service config, read and checked: the options of any method, and the channel's budget.
 *
 * @example
 * const config = readGrpcServiceConfig(json);
 * const publish = config.forMethod({ service: 'google.pubsub.v1.Publisher', method: 'Publish' });
 */
export interface GrpcServiceConfig {
  /** The `retryThrottling` bucket, given to every method's options; `undefined` without one. */
  readonly budget: RetryTokenBudget | undefined;
  /**
   * The options of a method: its own entry, else its service's, else the default (the empty
   * name `{}`). Throws, with the closest name, when none applies.
   */
  forMethod(name: GrpcMethodName): GrpcRetryOptions;
}

const WHERE = 'fromGrpcServiceConfig';
const TOP_KEYS = ['loadBalancingPolicy', 'loadBalancingConfig', 'methodConfig', 'retryThrottling', 'healthCheckConfig'];
const NAME_KEYS = ['service', 'method'];
const THROTTLING_KEYS = ['maxTokens', 'tokenRatio'];
/** The key of the default entry; `/` cannot start a service name. */
const DEFAULT_KEY = '/';

/**
 * Reads a whole gRPC service config (the JSON text, or its parsed object) once: every method
 * config, its names, policies and durations are checked now, and `retryThrottling` becomes one
 * budget shared by every method read from it, as gRPC shares it across a channel. Read a
 * document once per channel and take each method's options from it.
 *
 * @example
 * const config = readGrpcServiceConfig(readFileSync('service_config.json', 'utf8'));
 * const options = config.forMethod({ service: 'google.pubsub.v1.Publisher', method: 'Publish' });
 * await retry((ctx) => publish(request, ctx), options);
 */
export function readGrpcServiceConfig(config: unknown, options: GrpcServiceConfigOptions = {}): GrpcServiceConfig {
  const limit = readLimit(options);
  const top = readFields(WHERE, '', parsed(config), TOP_KEYS, true);
  const budget = top.retryThrottling === undefined ? undefined : readThrottling(top.retryThrottling);
  const byName = readMethodConfigs(top.methodConfig, limit, budget);
  return Object.freeze({
    budget,
    forMethod(name: GrpcMethodName): GrpcRetryOptions {
      const { service, method } = readName(name);
      const exact = method === undefined ? undefined : byName[`${service}/${method}`];
      const found = exact ?? byName[service] ?? byName[DEFAULT_KEY];
      return found ?? lookUp(WHERE, 'methodConfig', 'entry, service-wide entry or default for', nameText(service, method), byName);
    },
  });
}

/**
 * The options of one method from a gRPC service config (see {@link readGrpcServiceConfig}, which
 * this calls): retry with the document's backoff and codes, capped at 5 attempts unless
 * `maxAttemptsLimit` says otherwise. Each call makes a new budget from `retryThrottling`: for
 * several methods of one channel, read the document once with `readGrpcServiceConfig`.
 *
 * @example
 * const options = fromGrpcServiceConfig(
 *   { methodConfig: [{ name: [{ service: 'echo.Echo' }], retryPolicy: {
 *     maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }] },
 *   { service: 'echo.Echo', method: 'Say' },
 * );
 * await retry((ctx) => say(request, ctx), options);
 */
export function fromGrpcServiceConfig(config: unknown, target: GrpcMethodName & GrpcServiceConfigOptions): GrpcRetryOptions {
  const { service, method, maxAttemptsLimit } = target ?? {};
  return readGrpcServiceConfig(config, { maxAttemptsLimit }).forMethod({
    service,
    method,
  } as GrpcMethodName);
}

function parsed(config: unknown): unknown {
  if (typeof config !== 'string') return config;
  try {
    return JSON.parse(config);
  } catch (error) {
    throw new SyntaxError(`${WHERE}: the service config is not JSON: ${(error as Error).message}`);
  }
}

function readLimit(options: GrpcServiceConfigOptions): number {
  const limit = options?.maxAttemptsLimit ?? 5;
  if (limit === Number.POSITIVE_INFINITY || (Number.isSafeInteger(limit) && limit >= 1)) return limit;
  throw mustError(`${WHERE}: options.maxAttemptsLimit`, 'be a safe integer >= 1 or Infinity', limit, true);
}

function readName(name: GrpcMethodName): { service: string; method: string | undefined } {
  const { service, method } = name ?? {};
  if (typeof service !== 'string' || service === '')
    throw mustError(`${WHERE}: service`, 'be a fully qualified service name such as "google.pubsub.v1.Publisher"', service);
  if (method !== undefined && typeof method !== 'string') throw mustError(`${WHERE}: method`, 'be a string', method);
  return { service, method: method === '' ? undefined : method };
}

function nameText(service: string, method: string | undefined): string {
  return method === undefined ? service : `${service}/${method}`;
}

/** A6: both fields required, `maxTokens` in (0, 1000], `tokenRatio` > 0 with three decimals kept. */
function readThrottling(raw: unknown): RetryTokenBudget {
  const path = 'retryThrottling';
  const f = readFields(WHERE, path, raw, THROTTLING_KEYS, true);
  const maxTokens = readNumber(WHERE, pathOf(path, 'maxTokens'), f.maxTokens, (v) => v > 0 && v <= 1000, 'be a number > 0 and <= 1000');
  const tokenRatio = readNumber(
    WHERE,
    pathOf(path, 'tokenRatio'),
    f.tokenRatio,
    (v) => v >= 0.001,
    'be a number >= 0.001 (three decimals are kept)',
  );
  return createRetryBudget({ maxTokens, tokenRatio });
}

/** Every method config, frozen and validated, by `service/method`, `service`, or DEFAULT_KEY. */
function readMethodConfigs(raw: unknown, limit: number, budget: RetryTokenBudget | undefined): Record<string, GrpcRetryOptions> {
  const byName: Record<string, GrpcRetryOptions> = Object.create(null);
  const where: Record<string, string> = Object.create(null);
  if (raw === undefined) return byName;
  if (!Array.isArray(raw)) throw docError(WHERE, 'methodConfig', 'be a list', raw);
  raw.forEach((entry: unknown, i) => {
    const path = pathOf('methodConfig', i);
    const fields = readMethodFields(WHERE, path, entry);
    const options = frozenOptions(methodPolicy(WHERE, path, fields, limit), budget, path);
    const namesPath = pathOf(path, 'name');
    if (!Array.isArray(fields.name)) throw docError(WHERE, namesPath, 'be a list of names ({ service, method })', fields.name);
    fields.name.forEach((name: unknown, j) => {
      const at = pathOf(namesPath, j);
      const key = nameKey(at, name);
      if (key in where)
        throw new TypeError(`${WHERE}: ${at} names ${describe(key === DEFAULT_KEY ? {} : key)} again (first in ${where[key]})`);
      where[key] = at;
      byName[key] = options;
    });
  });
  return byName;
}

/** `service/method`, `service`, or the default; a method without a service is refused, as grpc-js does. */
function nameKey(path: string, raw: unknown): string {
  // No snake_case reading: 'service' and 'method' are spelled alike in both.
  const { service = '', method = '' } = readFields(WHERE, path, raw, NAME_KEYS);
  if (typeof service !== 'string') throw docError(WHERE, pathOf(path, 'service'), 'be a string', service);
  if (typeof method !== 'string') throw docError(WHERE, pathOf(path, 'method'), 'be a string', method);
  if (service === '' && method !== '') throw docError(WHERE, pathOf(path, 'method'), 'come with a service', method);
  if (service === '') return DEFAULT_KEY;
  return method === '' ? service : `${service}/${method}`;
}

function frozenOptions(policy: MethodPolicy, budget: RetryTokenBudget | undefined, path: string): GrpcRetryOptions {
  const options = Object.freeze({ ...policy, ...(budget === undefined ? {} : { budget }) });
  // retry()'s validator remembers a frozen object: a retry() given these options skips the check.
  readOptions(options, WHERE, path);
  return options;
}
