/**
 * GAPIC client configs (the `*_client_config.json` every generated Google Cloud Node.js client
 * ships, read by google-gax): a method's retry codes, its backoff, its overall timeout and its
 * growing per-attempt timeout, as tenacious's options. Errors name the path in the document.
 */
import { grpcCode } from '../classify/predicates.js';
import { readOptions } from '../core/read-options.js';
import type { AttemptTimeoutGrowth, BackoffPolicy, RetryOptions, RetryPredicate } from '../types.js';
import { mustError } from '../util/check.js';
import { docError, lookUp, pathOf, readFields, readMap, readNumber, readStatusCodes } from './config-doc.js';

/**
 * A method's options from a GAPIC client config: frozen, every choice present.
 *
 * @example
 * const options: GaxRetryOptions = fromGaxClientConfig(config, 'google.iam.v2.Policies', 'GetPolicy');
 * options.deadlineMs; // 600000
 */
export interface GaxRetryOptions extends Readonly<RetryOptions> {
  /** `Infinity` when the method retries (`total_timeout_millis` ends it), 1 when it does not. */
  readonly maxAttempts: number;
  /** `total_timeout_millis`; for a method that does not retry, its `timeout_millis` (or `Infinity`). */
  readonly deadlineMs: number;
  /** True for the method's retry codes, read by `grpcCodeOf`; never true for an empty list. */
  readonly retryable: RetryPredicate;
  /** The retry params' delays, with google-gax's full jitter; absent when the method does not retry. */
  readonly backoff?: Readonly<BackoffPolicy>;
  /** The growing RPC timeout of a method that retries; `timeout_millis` of one that does not. */
  readonly attemptTimeoutMs?: number | AttemptTimeoutGrowth;
}

const WHERE = 'fromGaxClientConfig';
const INTERFACE_KEYS = ['retry_codes', 'retry_params', 'methods'];
const METHOD_KEYS = ['timeout_millis', 'retry_codes_name', 'retry_params_name', 'bundling', 'long_running'];
const PARAM_KEYS = [
  'initial_retry_delay_millis',
  'retry_delay_multiplier',
  'max_retry_delay_millis',
  'initial_rpc_timeout_millis',
  'rpc_timeout_multiplier',
  'max_rpc_timeout_millis',
  'total_timeout_millis',
];

const NEVER: RetryPredicate = () => false;
const AT_LEAST_0 = (v: number): boolean => v >= 0;
const ABOVE_0 = (v: number): boolean => v > 0;
const AT_LEAST_1 = (v: number): boolean => v >= 1;

/**
 * The options google-gax would run a method with, from a GAPIC client config (the JSON text, or
 * its parsed object): `interfaces[interfaceName].methods[methodName]`, its `retry_codes_name`
 * and `retry_params_name`. Names are as the document writes them (`'GetPolicy'`); a name not
 * there is refused with the closest one.
 *
 * - With retry codes: waits of `initial_retry_delay_millis` growing by `retry_delay_multiplier`
 *   up to `max_retry_delay_millis`, each a uniform draw below that (google-gax waits
 *   `Math.random() * delay`: full jitter); `total_timeout_millis` is the deadline; each attempt's
 *   timeout starts at `initial_rpc_timeout_millis` (else `timeout_millis`) and grows by
 *   `rpc_timeout_multiplier` up to `max_rpc_timeout_millis`.
 * - With an empty code list (or none): one attempt, no error retried, `timeout_millis` as its
 *   timeout and the deadline, as google-gax sends such a method once.
 *
 * @example
 * import config from '@google-cloud/iam/build/src/v2/policies_client_config.json' with { type: 'json' };
 * const options = fromGaxClientConfig(config, 'google.iam.v2.Policies', 'GetPolicy');
 * await retry((ctx) => getPolicy(name, ctx), options);
 */
export function fromGaxClientConfig(config: unknown, interfaceName: string, methodName: string): GaxRetryOptions {
  if (typeof interfaceName !== 'string')
    throw mustError(`${WHERE}: interfaceName`, 'be a string such as "google.iam.v2.Policies"', interfaceName);
  if (typeof methodName !== 'string') throw mustError(`${WHERE}: methodName`, 'be a string such as "GetPolicy"', methodName);
  const top = readFields(WHERE, '', parsed(config), ['interfaces']);
  const interfaces = readMap(WHERE, 'interfaces', top.interfaces);
  const interfacePath = `interfaces[${JSON.stringify(interfaceName)}]`;
  const service = readFields(WHERE, interfacePath, lookUp(WHERE, 'interfaces', 'interface', interfaceName, interfaces), INTERFACE_KEYS);
  const methodsPath = pathOf(interfacePath, 'methods');
  const methods = readMap(WHERE, methodsPath, service.methods);
  const methodPath = `${methodsPath}[${JSON.stringify(methodName)}]`;
  const method = readFields(WHERE, methodPath, lookUp(WHERE, methodsPath, 'method', methodName, methods), METHOD_KEYS);

  const timeoutMs =
    method.timeout_millis === undefined
      ? undefined
      : readNumber(WHERE, pathOf(methodPath, 'timeout_millis'), method.timeout_millis, ABOVE_0, 'be a number of milliseconds > 0');
  const codes = method.retry_codes_name === undefined ? [] : readCodes(service, interfacePath, methodPath, method.retry_codes_name);
  if (codes.length === 0) return frozen(sendOnce(timeoutMs), methodPath);
  const params = readParams(service, interfacePath, methodPath, method.retry_params_name, timeoutMs);
  return frozen({ ...params, maxAttempts: Number.POSITIVE_INFINITY, retryable: grpcCode(...codes) }, methodPath);
}

function parsed(config: unknown): unknown {
  if (typeof config !== 'string') return config;
  try {
    return JSON.parse(config);
  } catch (error) {
    throw new SyntaxError(`${WHERE}: the client config is not JSON: ${(error as Error).message}`);
  }
}

/** google-gax sends a method without retry codes once, under `timeout_millis`. */
function sendOnce(timeoutMs: number | undefined): GaxRetryOptions {
  const deadlineMs = timeoutMs ?? Number.POSITIVE_INFINITY;
  return { maxAttempts: 1, retryable: NEVER, deadlineMs, ...(timeoutMs === undefined ? {} : { attemptTimeoutMs: timeoutMs }) };
}

function readCodes(service: Record<string, unknown>, interfacePath: string, methodPath: string, name: unknown): number[] {
  const namePath = pathOf(methodPath, 'retry_codes_name');
  if (typeof name !== 'string') throw docError(WHERE, namePath, 'be a string', name);
  const listsPath = pathOf(interfacePath, 'retry_codes');
  const lists = readMap(WHERE, listsPath, service.retry_codes);
  const list = lookUp(WHERE, listsPath, `retry code list (${namePath})`, name, lists);
  return readStatusCodes(WHERE, `${listsPath}[${JSON.stringify(name)}]`, list);
}

/** The named retry params, checked, as the options they set; `timeoutMs` is the method's `timeout_millis`. */
function readParams(
  service: Record<string, unknown>,
  interfacePath: string,
  methodPath: string,
  name: unknown,
  timeoutMs: number | undefined,
): Pick<GaxRetryOptions, 'backoff' | 'deadlineMs' | 'attemptTimeoutMs'> {
  const namePath = pathOf(methodPath, 'retry_params_name');
  if (typeof name !== 'string') throw docError(WHERE, namePath, 'be a string (a method with retry codes needs retry params)', name);
  const setsPath = pathOf(interfacePath, 'retry_params');
  const sets = readMap(WHERE, setsPath, service.retry_params);
  const path = `${setsPath}[${JSON.stringify(name)}]`;
  const p = readFields(WHERE, path, lookUp(WHERE, setsPath, `retry params (${namePath})`, name, sets), PARAM_KEYS);
  const num = (key: string, ok: (v: number) => boolean, rule: string): number => readNumber(WHERE, pathOf(path, key), p[key], ok, rule);
  const initialDelayMs = num('initial_retry_delay_millis', AT_LEAST_0, 'be a number of milliseconds >= 0');
  const multiplier = num('retry_delay_multiplier', AT_LEAST_1, 'be a number >= 1');
  const maxDelayMs = num(
    'max_retry_delay_millis',
    (v) => v >= initialDelayMs,
    `be a number of milliseconds >= initial_retry_delay_millis (${initialDelayMs})`,
  );
  const deadlineMs = num('total_timeout_millis', ABOVE_0, 'be a number of milliseconds > 0 (the method retries until then)');
  const rpcMultiplier = num('rpc_timeout_multiplier', AT_LEAST_1, 'be a number >= 1');
  // google-gax takes timeout_millis when the params give no first RPC timeout.
  const initialMs =
    p.initial_rpc_timeout_millis === undefined && timeoutMs !== undefined
      ? timeoutMs
      : num('initial_rpc_timeout_millis', ABOVE_0, 'be a number of milliseconds > 0');
  const maxRpcMs = num(
    'max_rpc_timeout_millis',
    (v) => v >= initialMs,
    `be a number of milliseconds >= the first RPC timeout (${initialMs})`,
  );
  return {
    backoff: Object.freeze({ initialDelayMs, multiplier, maxDelayMs, jitter: 'full' as const }),
    deadlineMs,
    attemptTimeoutMs: Object.freeze({ initialMs, multiplier: rpcMultiplier, maxMs: maxRpcMs }),
  };
}

function frozen(options: GaxRetryOptions, path: string): GaxRetryOptions {
  const result = Object.freeze(options);
  // retry()'s validator remembers a frozen object: a retry() given these options skips the check.
  readOptions(result, WHERE, path);
  return result;
}
