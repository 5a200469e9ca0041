// npm run demo:otel: what a retried call looks like in OpenTelemetry, with nothing to configure.
//
// A loopback server plays a Cloud Storage object that answers 503 twice before it serves the
// object. retryFetch fetches it under the gcs() preset (its backoff scaled down 100×), with
// otelTelemetry(), and global fetch is instrumented by @opentelemetry/instrumentation-undici
// with resendCountHook. The SDK runs in this process: at the end the demo prints the trace as
// a tree (the call span, and each attempt's HTTP client span under it) and the metrics.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { AggregationTemporality, type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { retryFetch } from '../src/fetch/index.js';
import { gcs } from '../src/google/index.js';
import { otelTelemetry, resendCountHook } from '../src/otel/index.js';

// --- the OpenTelemetry SDK, in this process -----------------------------------------------------

const finished: ReadableSpan[] = [];
const exporter: SpanExporter = {
  export: (spans, done) => {
    finished.push(...spans);
    done({ code: 0 });
  },
  shutdown: async () => {},
};
class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}
const reader = new Reader();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
new UndiciInstrumentation({ startSpanHook: resendCountHook });

// --- the server: 503, 503, then the object ------------------------------------------------------

const answers = [503, 503];
const server = createServer((_req, res) => {
  const status = answers.shift() ?? 200;
  if (status === 200) res.writeHead(200, { 'content-type': 'text/csv' }).end('date,revenue\n2026-11-01,1200\n');
  else res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":{"code":503,"message":"Backend Error"}}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

// --- the call ----------------------------------------------------------------------------------

const preset = gcs({ operation: 'objects.get', backoff: { initialDelayMs: 10, maxDelayMs: 640 } });
const response = await retryFetch(`http://127.0.0.1:${port}/storage/v1/b/demo-bucket/o/report.csv?alt=media`, undefined, {
  ...preset,
  telemetry: otelTelemetry(),
});
console.log(`retryFetch answered ${response.status}: ${JSON.stringify(await response.text())}\n`);
server.close();
await new Promise((resolve) => setTimeout(resolve, 20)); // the last HTTP span ends with its body

// --- what OpenTelemetry received ---------------------------------------------------------------

const ms = (span: ReadableSpan) => (span.duration[0] * 1e3 + span.duration[1] / 1e6).toFixed(1);
const startOf = (span: ReadableSpan) => span.startTime[0] * 1e9 + span.startTime[1];
const KIND = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const shown = (attributes: Record<string, unknown>, keys: string[]) =>
  keys
    .filter((key) => attributes[key] !== undefined)
    .map((key) => `${key}=${attributes[key]}`)
    .join(' ');

function printTree(span: ReadableSpan, indent: string): void {
  const keys = [
    'gcp.client.service',
    'tenacious.attempts',
    'tenacious.outcome',
    'error.type',
    'http.request.method',
    'http.response.status_code',
    'http.request.resend_count',
  ];
  console.log(`${indent}${span.name}  [${KIND[span.kind]}, ${ms(span)} ms]  ${shown(span.attributes, keys)}`);
  for (const event of span.events)
    console.log(`${indent}  · ${event.name}  ${shown(event.attributes ?? {}, Object.keys(event.attributes ?? {}))}`);
  const children = finished
    .filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId)
    .sort((a, b) => startOf(a) - startOf(b));
  for (const child of children) printTree(child, `${indent}    `);
}

console.log('Trace:');
for (const root of finished.filter((s) => s.parentSpanContext === undefined)) printTree(root, '  ');

console.log('\nMetrics (meter "tenacious"):');
const { resourceMetrics } = await reader.collect();
for (const metric of resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'tenacious').flatMap((s) => s.metrics)) {
  for (const point of metric.dataPoints as DataPoint<unknown>[]) {
    const value =
      typeof point.value === 'number'
        ? String(point.value)
        : `count=${(point.value as Histogram).count} sum=${Number((point.value as Histogram).sum?.toFixed(4))}`;
    const unit = metric.descriptor.unit === '' ? '' : ` ${metric.descriptor.unit}`;
    console.log(`  ${metric.descriptor.name}${unit}  {${shown(point.attributes, Object.keys(point.attributes))}}  ${value}`);
  }
}
