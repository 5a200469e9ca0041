/**
 * The calls the success-path benchmark compares, each written the way its library's README
 * shows: cockatiel's policy is built once (it is meant to be shared), the others take their
 * options per call.
 */
import asyncRetry from 'async-retry';
import { ExponentialBackoff, handleAll, retry as cockatielRetry } from 'cockatiel';
import { backOff } from 'exponential-backoff';
import pRetry from 'p-retry';
import type { Library } from './library.js';

/** Something that turns an operation into a retried call of it. */
export interface Contender {
  readonly name: string;
  /** Wraps `op` in the library's retry. */
  readonly wrap: (op: () => Promise<unknown>) => () => Promise<unknown>;
  /** Not a library: a lower bound that shows what any design must pay (see BENCHMARKS.md). */
  readonly reference?: boolean;
}

// Captures a new promise's settle functions without a closure per call.
let settleValue: (value: unknown) => void = () => {};
let settleError: (error: unknown) => void = () => {};
function captureSettlers(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  settleValue = resolve;
  settleError = reject;
}
const RESOLVED = Promise.resolve();
function nothing(): void {}
const hostPerformance = globalThis.performance;
/** Where the clock-read floor puts its reading, so that the read is not optimised away. */
export let clockReading = 0;

/** The success-path contenders, the bare await first (every ratio is to it). */
export const contenders = (lib: Library): readonly Contender[] => [
  { name: 'bare await', wrap: (op) => op },
  {
    // A wrapper that can settle before `op` does (as a deadline needs) must return a promise of
    // its own and react to op's: this is that and nothing else.
    name: 'floor: own promise + one reaction',
    reference: true,
    wrap: (op) => () => {
      const promise = new Promise(captureSettlers);
      op().then(settleValue, settleError);
      return promise;
    },
  },
  {
    // …and to count a deadline from the call, one clock read: the least any wrapper that keeps
    // such a deadline can cost, if it could also tell without a microtask or a timer that op is
    // still running. performance.now() as the library reads it under the host's own timers: on
    // the host's performance object, whose now() is looked up at each call (src/runtime/clock.ts).
    name: 'floor: own promise + one reaction + one clock read',
    reference: true,
    wrap: (op) => () => {
      const promise = new Promise(captureSettlers);
      clockReading = hostPerformance.now();
      op().then(settleValue, settleError);
      return promise;
    },
  },
  {
    // Back to the first floor: to notice, without a timer, that op is still running, one more microtask.
    name: 'floor: + one microtask',
    reference: true,
    wrap: (op) => () => {
      const promise = new Promise(captureSettlers);
      op().then(settleValue, settleError);
      RESOLVED.then(nothing);
      return promise;
    },
  },
  {
    // …and the clock read of the deadline counted from the call (not from whenever the first
    // check runs): what retry() pays on its success path, before any state of its own.
    name: 'floor: + one microtask + one clock read',
    reference: true,
    wrap: (op) => () => {
      const promise = new Promise(captureSettlers);
      clockReading = hostPerformance.now();
      op().then(settleValue, settleError);
      RESOLVED.then(nothing);
      return promise;
    },
  },
  { name: 'tenacious retry(fn)', wrap: (op) => () => lib.retry(op) },
  {
    // Issue 23: what the `telemetry` option costs where no OpenTelemetry SDK is registered (the
    // API's no-op tracer and meter): the call's span, context and metric calls, made and dropped.
    name: 'tenacious retry(fn, { telemetry: otelTelemetry() }) (no SDK)',
    wrap: (op) => {
      const options = Object.freeze({ telemetry: lib.otelTelemetry() });
      return () => lib.retry(op, options);
    },
  },
  {
    // The preset made once and reused: the frozen-options path.
    name: 'tenacious retry(fn, gcs()) (preset made once)',
    wrap: (op) => {
      const preset = lib.gcs({ operation: 'objects.get' });
      return () => lib.retry(op, preset);
    },
  },
  {
    // As often written: the preset called inline, its own cost included.
    name: 'tenacious retry(fn, gcs()) (preset made per call)',
    wrap: (op) => () => lib.retry(op, lib.gcs({ operation: 'objects.get' })),
  },
  {
    // Wrapped once, called many times: the options are read when wrapping.
    name: 'tenacious withRetry(fn)',
    wrap: (op) => lib.withRetry(op),
  },
  {
    // A wrapped function called with an argument: each call makes a closure to keep it.
    name: 'tenacious withRetry(fn) called with an argument',
    wrap: (op) => {
      const withArgument = lib.withRetry(op as (id: number) => Promise<unknown>);
      return () => withArgument(1);
    },
  },
  {
    name: 'tenacious withRetry(fn, { maxAttempts: 5 })',
    wrap: (op) => lib.withRetry(op, { maxAttempts: 5 }),
  },
  {
    // The same options made once, in a constant: the reference of the literal below.
    name: 'tenacious retry(fn, options) (options made once)',
    wrap: (op) => {
      const options = { maxAttempts: 5 };
      return () => lib.retry(op, options);
    },
  },
  {
    name: 'tenacious retry(fn, { maxAttempts: 5 })',
    // A fresh options literal on every call, as most code writes it.
    wrap: (op) => () => lib.retry(op, { maxAttempts: 5 }),
  },
  {
    name: 'cockatiel 3.2',
    wrap: (op) => {
      const policy = cockatielRetry(handleAll, { maxAttempts: 5, backoff: new ExponentialBackoff() });
      return () => policy.execute(op);
    },
  },
  { name: 'p-retry 7.1', wrap: (op) => () => pRetry(op, { retries: 5 }) },
  { name: 'exponential-backoff 3.1', wrap: (op) => () => backOff(op, { numOfAttempts: 5 }) },
  { name: 'async-retry 1.3', wrap: (op) => () => asyncRetry(op, { retries: 5 }) },
];
