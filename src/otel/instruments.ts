/**
 * The metrics of 'tenacious/otel', on the meter `tenacious`. Durations in seconds, as
 * OpenTelemetry's conventions ask; the bucket boundaries reach the minutes a retried call may
 * take (Cloud Storage's example deadline is 600 s). Names follow gRPC's retry metrics (gRFC
 * A96: `grpc.client.call.retries`, `grpc.client.call.retry_delay`): per call, not per retry.
 */
import type { Counter, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { api } from './api.js';

/** Seconds: the conventions' HTTP duration buckets, then the minutes of a long retried call. */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300, 600];
const RETRIES = [0, 1, 2, 3, 4, 5, 10, 20, 50];

/** The instruments every call records to. @internal */
export interface Instruments {
  /** One value per call: from its start to its outcome. */
  readonly callDuration: Histogram;
  /** One value per call: the retries it made. */
  readonly callRetries: Histogram;
  /** One value per call that retried: the time it spent waiting between attempts. */
  readonly retryDelay: Histogram;
  /** One value per attempt: from its start to its outcome. */
  readonly attemptDuration: Histogram;
  /** One per event of a call, by `tenacious.event`. */
  readonly events: Counter;
}

function instrumentsOf(meter: Meter): Instruments {
  return {
    callDuration: meter.createHistogram('tenacious.call.duration', {
      description: 'Duration of a retried call, from its start to its outcome, waits included.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    }),
    callRetries: meter.createHistogram('tenacious.call.retries', {
      description: 'Retries a call made (attempts after the first).',
      unit: '{retry}',
      advice: { explicitBucketBoundaries: RETRIES },
    }),
    retryDelay: meter.createHistogram('tenacious.call.retry_delay', {
      description: 'Time a call that retried spent waiting between its attempts.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    }),
    attemptDuration: meter.createHistogram('tenacious.attempt.duration', {
      description: 'Duration of one attempt of a retried call, from its start to its outcome.',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS },
    }),
    events: meter.createCounter('tenacious.call.events', {
      description: 'Events of retried calls: attempts, retries, hedged copies, progress, resumes, outcomes.',
      unit: '{event}',
    }),
  };
}

/** The instruments of one meter provider, and whether its meter is the API's no-op one. @internal */
export interface MeterInstruments {
  readonly instruments: Instruments;
  /** True while nothing records (no SDK behind the provider): a call may then skip its metrics. */
  readonly silent: boolean;
}

/**
 * The instruments of `provider`, or of the global meter provider as it is at each call: one
 * registered after `otelTelemetry()` was made is used from its next call on (the API's global
 * meter, unlike its global tracer, does not follow a later registration by itself).
 *
 * @internal
 */
export function instrumentsFor(provider: MeterProvider | undefined): () => MeterInstruments {
  let made: (MeterInstruments & { readonly from: MeterProvider }) | undefined;
  return () => {
    const current = provider ?? api.metrics.getMeterProvider();
    if (made?.from !== current) {
      const meter = current.getMeter('tenacious');
      made = { from: current, instruments: instrumentsOf(meter), silent: meter === api.createNoopMeter() };
    }
    return made;
  };
}
