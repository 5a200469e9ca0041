// The instruments of otelTelemetry() as a reader of the real OpenTelemetry SDK sees them: their
// names, kinds, units, descriptions and histogram buckets, and that a provider's instruments are
// made once, not per call.
import { type MeterProvider as ApiMeterProvider, metrics } from '@opentelemetry/api';
import { DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { retry } from '../../src/index.js';
import { otelTelemetry } from '../../src/otel/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';
import { collectingProvider } from './sdk.js';

const clock = useVirtualClock();

/** Seconds, from 5 ms to the 600 s of a long retried call (the SDK's default buckets are sized for milliseconds). */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300, 600];

describe('otelTelemetry(): the instruments', () => {
  it('names each metric, with its kind, unit, description and, for histograms, buckets fit for retried calls', async () => {
    const { meterProvider, metrics: collect } = collectingProvider();
    const telemetry = otelTelemetry({ meterProvider });
    const call = track(
      retry(
        (() => {
          let n = 0;
          return () => {
            if (n++ === 0) throw httpError(503);
            return 'ok';
          };
        })(),
        { backoff: { initialDelayMs: 100, jitter: 'none' }, telemetry },
      ),
    );
    await clock.tickAsync(100);
    expect(call.value).toBe('ok');

    const described = (await collect()).map((metric) => ({
      name: metric.descriptor.name,
      // A counter is a monotonic sum.
      type: metric.dataPointType === DataPointType.SUM ? (metric.isMonotonic ? 'counter' : 'up-down') : metric.dataPointType,
      unit: metric.descriptor.unit,
      description: metric.descriptor.description,
      boundaries:
        metric.dataPointType === DataPointType.HISTOGRAM ? (metric.dataPoints[0]!.value as Histogram).buckets.boundaries : undefined,
    }));
    described.sort((a, b) => a.name.localeCompare(b.name));
    expect(described).toEqual([
      {
        name: 'tenacious.attempt.duration',
        type: DataPointType.HISTOGRAM,
        unit: 's',
        description: 'Duration of one attempt of a retried call, from its start to its outcome.',
        boundaries: SECONDS,
      },
      {
        name: 'tenacious.call.duration',
        type: DataPointType.HISTOGRAM,
        unit: 's',
        description: 'Duration of a retried call, from its start to its outcome, waits included.',
        boundaries: SECONDS,
      },
      {
        name: 'tenacious.call.events',
        type: 'counter',
        unit: '{event}',
        description: 'Events of retried calls: attempts, retries, hedged copies, progress, resumes, outcomes.',
        boundaries: undefined,
      },
      {
        name: 'tenacious.call.retries',
        type: DataPointType.HISTOGRAM,
        unit: '{retry}',
        description: 'Retries a call made (attempts after the first).',
        boundaries: [0, 1, 2, 3, 4, 5, 10, 20, 50],
      },
      {
        name: 'tenacious.call.retry_delay',
        type: DataPointType.HISTOGRAM,
        unit: 's',
        description: 'Time a call that retried spent waiting between its attempts.',
        boundaries: SECONDS,
      },
    ]);
  });

  it("makes a provider's instruments once, not at every call", async () => {
    const sdkProvider = collectingProvider().meterProvider;
    const meters: string[] = [];
    const counted: ApiMeterProvider = {
      getMeter: (name, version, options) => {
        meters.push(name);
        return sdkProvider.getMeter(name, version, options);
      },
    };
    const telemetry = otelTelemetry({ meterProvider: counted });
    for (let i = 0; i < 3; i++) await retry(() => i, { telemetry });
    expect(meters).toEqual(['tenacious']);
  });

  it('on the global provider, records to the one registered at each call: a new registration gets new instruments', async () => {
    const providers = [collectingProvider(), collectingProvider()] as const;
    const telemetry = otelTelemetry();
    const counts = async ({ metrics: collect }: ReturnType<typeof collectingProvider>) =>
      (await collect())
        .filter((m) => m.descriptor.name === 'tenacious.call.duration')
        .map((m) => (m.dataPoints[0]!.value as Histogram).count);
    try {
      metrics.setGlobalMeterProvider(providers[0].meterProvider);
      await retry(() => 1, { telemetry });
      await retry(() => 2, { telemetry });
      metrics.disable(); // the API registers a global provider once: dropped first, as at a restart
      metrics.setGlobalMeterProvider(providers[1].meterProvider);
      await retry(() => 3, { telemetry });
      expect(await counts(providers[0])).toEqual([2]);
      expect(await counts(providers[1])).toEqual([1]);
    } finally {
      metrics.disable();
    }
  });
});
