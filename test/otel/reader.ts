// A meter provider of the real SDK with a reader the test collects from, for tests that read
// what the SDK knows of an instrument (its descriptor, its histogram buckets), not only points.
import { AggregationTemporality, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A fresh meter provider, and the metrics of the meter `tenacious` it holds, collected now. */
export function collectingProvider(): { meterProvider: MeterProvider; metrics: () => Promise<MetricData[]> } {
  const reader = new TestReader();
  return {
    meterProvider: new MeterProvider({ readers: [reader] }),
    metrics: async () =>
      (await reader.collect()).resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tenacious').flatMap((s) => s.metrics),
  };
}
