/**
 * `tenacious schedule --from-service-config FILE --method Service/Method`: the waits of a
 * method's `retryPolicy` in a gRPC service config, read by the library's own reader. Pure:
 * main.ts reads the file and hands over its text.
 */
import { fromGrpcServiceConfig } from '../google/index.js';
import type { ScheduleSpec } from './schedule.js';
import { UsageError } from './usage-error.js';

/**
 * What the command line asks of a service config's schedule.
 *
 * @example
 * const request: ServiceConfigScheduleRequest = { kind: 'schedule-service-config', file: 'sc.json', service: 'echo.Echo', method: 'Say' };
 */
export interface ServiceConfigScheduleRequest {
  readonly kind: 'schedule-service-config';
  readonly file: string;
  readonly service: string;
  readonly method: string;
  /** `--max-attempts`: rows to print instead of the policy's (capped) count. */
  readonly attempts?: number;
  /** `--deadline`: instead of the method config's `timeout`. */
  readonly deadlineMs?: number;
}

/**
 * The schedule of the method's retry policy, from the document's text. Throws a one-line
 * {@link UsageError} naming the file for anything the reader refuses, or when the method has no
 * retry policy (nothing to wait for).
 *
 * @example
 * process.stdout.write(renderSchedule(serviceConfigSchedule(request, readFileSync(request.file, 'utf8'))));
 */
export function serviceConfigSchedule(request: ServiceConfigScheduleRequest, text: string): ScheduleSpec {
  const { file, service, method } = request;
  const name = `${service}/${method}`;
  let options: ReturnType<typeof fromGrpcServiceConfig>;
  try {
    options = fromGrpcServiceConfig(text, { service, method });
  } catch (error) {
    // Stryker disable next-line Regex: equivalent: every message the reader throws starts with "fromGrpcServiceConfig: ", so its first match is at 0 with or without ^
    throw new UsageError(`--from-service-config ${file}: ${(error as Error).message.replace(/^fromGrpcServiceConfig: /, '')}`);
  }
  const { backoff, attemptTimeoutMs } = options;
  if (backoff === undefined) {
    const what = options.hedge === undefined ? 'no retryPolicy' : 'a hedgingPolicy, not a retryPolicy';
    throw new UsageError(`--from-service-config ${file}: ${name} has ${what}: no waits to print`);
  }
  return {
    backoff,
    deadlineMs: request.deadlineMs ?? options.deadlineMs,
    attempts: request.attempts ?? options.maxAttempts,
    ...(typeof attemptTimeoutMs === 'number' ? { attemptTimeoutMs } : {}),
    source: `${file}, ${name}`,
  };
}
