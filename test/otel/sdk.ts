// The real OpenTelemetry SDK, as an application would set it up, for the tests of
// 'tenacious/otel': a tracer provider exporting to memory, a meter provider with a reader the
// test collects from, and the AsyncLocalStorage context manager (what a Node SDK registers).
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  type MetricData,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * An exporter to memory that answers at once: the SDK's InMemorySpanExporter answers from a
 * timer, which the virtual clock would hold (and the tests check that no timer is left).
 */
class MemoryExporter implements SpanExporter {
  spans: ReadableSpan[] = [];
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans.push(...spans);
    done({ code: 0 }); // ExportResultCode.SUCCESS
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A reader whose `collect()` the test calls. */
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

/**
 * A fresh meter provider, and the metrics of the meter `tenacious` it holds, collected now: for
 * tests that read what the SDK knows of an instrument (its descriptor, its buckets), not only points.
 */
export function collectingProvider(): { meterProvider: MeterProvider; metrics: () => Promise<MetricData[]> } {
  const reader = new TestReader();
  return {
    meterProvider: new MeterProvider({ readers: [reader] }),
    metrics: async () =>
      (await reader.collect()).resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tenacious').flatMap((s) => s.metrics),
  };
}

/** One SDK for a test file: fresh exporter contents and metrics for each test. */
export function useSdk() {
  const exporter = new MemoryExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let reader = new TestReader();
  let meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(tracerProvider);
  });
  afterEach(() => {
    exporter.spans = [];
    reader = new TestReader();
    meterProvider = new MeterProvider({ readers: [reader] });
  });
  afterAll(() => {
    contextManager.disable();
    context.disable();
    trace.disable();
  });
  return {
    tracerProvider,
    /** The meter provider of the running test (each test has its own). */
    meterProvider: () => meterProvider,
    spans: (): ReadableSpan[] => exporter.spans,
    /** The data points of metric `name`, collected now. */
    points: async (name: string): Promise<DataPoint<unknown>[]> => {
      const { resourceMetrics } = await reader.collect();
      return pointsOf(resourceMetrics, name);
    },
  };
}

function pointsOf(resourceMetrics: ResourceMetrics, name: string): DataPoint<unknown>[] {
  return resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === 'tenacious')
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
}

/** A histogram point's count, sum, min and max. */
export function summary(point: DataPoint<unknown> | undefined): Pick<Histogram, 'count' | 'sum' | 'min' | 'max'> | undefined {
  if (point === undefined) return undefined;
  const { count, sum, min, max } = point.value as Histogram;
  return { count, sum, min, max };
}
