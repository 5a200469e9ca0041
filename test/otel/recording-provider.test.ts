// 'tenacious/otel' against a tracer and a meter that keep exactly what they are handed. The real
// SDK drops an undefined attribute value and a NaN measurement on its own, which would hide a
// telemetry that hands them over; another tracer or meter (a vendor's, a test double) may not,
// so what the library hands over is checked here, value by value.
import type { Attributes, Histogram, Meter, MeterProvider, Span, SpanOptions, Tracer, TracerProvider } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { retry } from '../../src/index.js';
import { otelTelemetry } from '../../src/otel/index.js';
import { useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** What the fake providers were handed. */
interface Recorded {
  /** The attributes each span was started with. */
  readonly spanStarts: Attributes[];
  /** Every value recorded on each histogram, by name. */
  readonly histograms: Map<string, number[]>;
}

/** A span that accepts every call and keeps nothing: only its start is under test here. */
function quietSpan(): Span {
  const span = {
    spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }),
    setAttribute: () => span,
    setAttributes: () => span,
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus: () => span,
    updateName: () => span,
    end: () => {},
    isRecording: () => true,
    recordException: () => {},
  };
  return span as Span;
}

/** A tracer provider and a meter provider that record what they are handed, unfiltered. */
function recordingProviders(): { tracerProvider: TracerProvider; meterProvider: MeterProvider; recorded: Recorded } {
  const recorded: Recorded = { spanStarts: [], histograms: new Map() };
  const tracer = {
    startSpan(_name: string, options?: SpanOptions): Span {
      recorded.spanStarts.push({ ...options?.attributes });
      return quietSpan();
    },
    startActiveSpan: () => {
      throw new Error('not used by tenacious');
    },
  } as unknown as Tracer;
  const histogram = (name: string): Histogram => {
    const values: number[] = [];
    recorded.histograms.set(name, values);
    return { record: (value: number) => void values.push(value) } as Histogram;
  };
  const meter = {
    createHistogram: histogram,
    createCounter: () => ({ add: () => {} }),
  } as unknown as Meter;
  return {
    tracerProvider: { getTracer: () => tracer },
    meterProvider: { getMeter: () => meter },
    recorded,
  };
}

describe('otelTelemetry(): what a tracer or meter that filters nothing is handed', () => {
  it('starts the call span with no attribute key whose value is undefined when no service is named', async () => {
    const { tracerProvider, meterProvider, recorded } = recordingProviders();
    await retry(() => 'ok', { telemetry: otelTelemetry({ tracerProvider, meterProvider }), name: 'items.get' });
    expect(recorded.spanStarts).toStrictEqual([{}]); // strict: a key holding undefined is not {}
  });

  it('starts the call span with the service when one is named', async () => {
    const { tracerProvider, meterProvider, recorded } = recordingProviders();
    await retry(() => 'ok', { telemetry: otelTelemetry({ tracerProvider, meterProvider }), service: 'storage.googleapis.com' });
    expect(recorded.spanStarts).toEqual([{ 'gcp.client.service': 'storage.googleapis.com' }]);
  });

  it('records no attempt duration for an abort that comes during a backoff wait: no NaN reaches the meter', async () => {
    const { tracerProvider, meterProvider, recorded } = recordingProviders();
    const controller = new AbortController();
    const call = retry(
      () => {
        throw Object.assign(new Error('unavailable'), { status: 503 });
      },
      {
        telemetry: otelTelemetry({ tracerProvider, meterProvider }),
        signal: controller.signal,
        backoff: { initialDelayMs: 1000, jitter: 'none' },
      },
    );
    const settled = call.catch((error: unknown) => error);
    await clock.tickAsync(10); // attempt 1 failed; the call waits 1 s
    controller.abort(new Error('caller gave up'));
    await expect(settled).resolves.toMatchObject({ message: 'caller gave up' });
    const attempts = recorded.histograms.get('tenacious.attempt.duration');
    // Attempt 1 ended (failure) before the wait: one value, and a finite one.
    expect(attempts).toHaveLength(1);
    expect(attempts!.every(Number.isFinite)).toBe(true);
  });
});
