// 'tenacious/otel' on the runs of a call: a resumable upload (progress, then a retry) against
// the loopback storage testbench, and a download whose body broke after the response was
// handed over, which runs again under a span of its own. The real SDK records both.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { gcsResumableUpload, gcsStartResumableUpload } from '../../src/google/index.js';
import { otelTelemetry } from '../../src/otel/index.js';
import { type Testbench, pattern, startTestbench } from '../fetch/testbench.js';
import { useSdk } from './sdk.js';

const sdk = useSdk();
const KiB = 1024;
const quick = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const }, deadlineMs: 10_000 };
const telemetryNow = () => otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider() });

const benches: Testbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.close()));
});

describe('a resumable upload with otelTelemetry()', () => {
  it('is one span named objects.insert, service storage, with a progress event per persisted chunk and the retry after the reset', async () => {
    const tb = await startTestbench();
    benches.push(tb);
    const uri = await gcsStartResumableUpload({ bucket: 'bucket', name: 'obj.bin', token: 't', baseUrl: tb.base });
    // Chunk 0 persisted, chunk 1 reset (nothing persisted), then the status query and the rest.
    tb.uploadFaults.push('ok', 'reset');
    const data = pattern(512 * KiB);
    const res = await gcsResumableUpload(uri, new Uint8Array(data), { ...quick, chunkSizeBytes: 256 * KiB, telemetry: telemetryNow() });
    expect(res.status).toBe(200);
    expect(tb.objects.get('obj.bin')?.data.equals(data)).toBe(true);

    const [span, ...others] = sdk.spans();
    expect(others).toEqual([]);
    expect(span?.name).toBe('objects.insert');
    expect(span?.attributes).toEqual({ 'gcp.client.service': 'storage', 'tenacious.attempts': 2, 'tenacious.outcome': 'success' });
    expect(span?.events.map((e) => [e.name, e.attributes?.['tenacious.attempt']])).toEqual([
      ['tenacious.progress', 1],
      ['tenacious.retry', 1],
    ]);
    // The reset, as undici reports it under fetch's TypeError.
    expect(span?.events[1]?.attributes?.['error.type']).toBe('UND_ERR_SOCKET');
  });
});

describe('a download resumed after its body broke, with otelTelemetry()', () => {
  /** A 200 of 20 bytes whose body breaks after 10; a request with a Range gets the other 10. */
  const fetchFn: typeof fetch = async (_input, init) => {
    const range = new Headers(init?.headers).get('range');
    const resumed = range !== null;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(10).fill(resumed ? 0x62 : 0x61));
      },
      pull(controller) {
        if (resumed) controller.close();
        else controller.error(new TypeError('terminated'));
      },
    });
    return resumed
      ? new Response(body, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20' } })
      : new Response(body, { status: 200, headers: { etag: '"v1"', 'content-length': '20' } });
  };

  it('ends the call span when the response is handed over, and runs the resume under a span of its own, a child of the first', async () => {
    const telemetry = telemetryNow();
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fetchFn, telemetry, name: 'objects.get' });
    expect(await res.text()).toBe(`${'a'.repeat(10)}${'b'.repeat(10)}`);

    const spans = sdk.spans();
    expect(spans.map((s) => [s.name, s.kind, s.attributes['tenacious.resumed']])).toEqual([
      ['objects.get', SpanKind.INTERNAL, undefined],
      ['objects.get', SpanKind.INTERNAL, true],
    ]);
    const [first, resumed] = spans;
    expect(first?.attributes).toEqual({ 'tenacious.attempts': 1, 'tenacious.outcome': 'success' });
    expect(resumed?.parentSpanContext?.spanId).toBe(first?.spanContext().spanId);
    expect(resumed?.spanContext().traceId).toBe(first?.spanContext().traceId);
    expect(resumed?.attributes).toMatchObject({ 'tenacious.attempts': 2, 'tenacious.outcome': 'success' });
    expect(resumed?.status.code).toBe(SpanStatusCode.UNSET);
    expect(resumed?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['tenacious.resume', { 'tenacious.attempt': 1, 'error.type': 'TypeError' }],
      [
        'tenacious.retry',
        { 'tenacious.attempt': 1, 'tenacious.delay_ms': 1, 'tenacious.delay_source': 'backoff', 'error.type': 'TypeError' },
      ],
    ]);
    // The call's metrics once, at its first outcome; the resumed run counts as events.
    expect((await sdk.points('tenacious.call.duration')).map((p) => (p.value as { count: number }).count)).toEqual([1]);
    const events = await sdk.points('tenacious.call.events');
    expect(Object.fromEntries(events.map((p) => [p.attributes['tenacious.event'], p.value]))).toMatchObject({ resume: 1, success: 2 });
  });
});
