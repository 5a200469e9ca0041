// Retries visible on the wire's spans: retryFetch with otelTelemetry() against a real node:http
// loopback server, global fetch instrumented by the real @opentelemetry/instrumentation-undici
// with resendCountHook. One call span; one HTTP client span per attempt, each its child, the
// resends numbered as OpenTelemetry's HTTP client conventions ask (http.request.resend_count).
// Real time with 1 ms backoffs: the sockets and undici's diagnostics channels run on the real
// event loop, which a virtual clock would not drive.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { otelTelemetry, resendCountHook } from '../../src/otel/index.js';
import { type Loopback, startLoopback } from '../helpers/loopback.js';
import { useSdk } from './sdk.js';

const sdk = useSdk();
let instrumentation: UndiciInstrumentation;
const backoff = { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const };

let server: Loopback;
const answers: number[] = [];
beforeAll(async () => {
  // Made here, after useSdk() registered the context manager; enabled as it is constructed.
  instrumentation = new UndiciInstrumentation({ startSpanHook: resendCountHook });
  instrumentation.setTracerProvider(sdk.tracerProvider);
  server = await startLoopback((_req, res) => {
    const status = answers.shift() ?? 500;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
  });
});
afterAll(async () => {
  instrumentation.disable();
  await server.close();
});

/** The finished spans, once `count` have ended (an HTTP span ends with its response's body). */
async function spansWhen(count: number): Promise<ReadableSpan[]> {
  await vi.waitFor(() => expect(sdk.spans()).toHaveLength(count));
  return sdk.spans();
}

describe('retryFetch with otelTelemetry() and the undici instrumentation', () => {
  it('answers 503, 503, 200: one call span and three HTTP client spans, its children, resend_count absent, 1, 2', async () => {
    answers.push(503, 503, 200);
    const telemetry = otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider() });
    const res = await retryFetch(`${server.url}/objects/a`, undefined, { backoff, telemetry, name: 'objects.get', service: 'storage' });
    expect(await res.text()).toBe('answer 200');

    const spans = await spansWhen(4);
    const [call, ...others] = spans.filter((s) => s.kind === SpanKind.INTERNAL);
    expect(others).toEqual([]);
    expect(call?.name).toBe('objects.get');
    expect(call?.attributes).toEqual({ 'gcp.client.service': 'storage', 'tenacious.attempts': 3, 'tenacious.outcome': 'success' });
    expect(call?.events.map((e) => e.attributes?.['tenacious.attempt'])).toEqual([1, 2]);

    const http = spans
      .filter((s) => s.kind === SpanKind.CLIENT)
      .sort((a, b) => a.startTime[1] - b.startTime[1] + 1e9 * (a.startTime[0] - b.startTime[0]));
    expect(http.map((s) => s.attributes['http.response.status_code'])).toEqual([503, 503, 200]);
    expect(http.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    for (const span of http) {
      expect(span.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(call?.spanContext().traceId);
    }
    expect(http[2]?.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('leaves a fetch outside any retried call as it was: no resend_count, no parent', async () => {
    answers.push(200);
    const res = await fetch(`${server.url}/plain`);
    await res.text();
    const [span] = await spansWhen(1);
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes['http.request.resend_count']).toBeUndefined();
    expect(span?.parentSpanContext).toBeUndefined();
  });

  it('numbers the resends of a retryFetch that gives up, and ends the call span with status ERROR', async () => {
    answers.push(503, 503);
    const telemetry = otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider() });
    const res = await retryFetch(`${server.url}/down`, undefined, { backoff, maxAttempts: 2, telemetry });
    // retryFetch resolves with the last answer, as fetch does; the call gave up on it.
    expect(res.status).toBe(503);
    await res.text();
    const spans = await spansWhen(3);
    const call = spans.find((s) => s.kind === SpanKind.INTERNAL);
    expect(call?.attributes).toMatchObject({ 'tenacious.attempts': 2, 'tenacious.outcome': 'attempts', 'error.type': '503' });
    expect(call?.status.code).toBe(SpanStatusCode.ERROR);
    const http = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(http.map((s) => s.attributes['http.request.resend_count']).sort()).toEqual([1, undefined]);
  });
});
