// resendCountHook on the other instrumentation OpenTelemetry ships for Node's HTTP clients:
// the real @opentelemetry/instrumentation-http, hooked into node:http as an application's SDK
// hooks it, with `startOutgoingSpanHook: resendCountHook`. A retry() whose attempts send with
// http.get to a loopback server answering 503, 503, 200 yields one call span and three HTTP
// client spans, its children, numbered as the conventions ask.
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import { SpanKind } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpStatusError, retry } from '../../src/index.js';
import { otelTelemetry, resendCountHook } from '../../src/otel/index.js';
import { type Loopback, startLoopback } from '../helpers/loopback.js';
import { useSdk } from './sdk.js';

const sdk = useSdk();
let instrumentation: HttpInstrumentation;
let http: typeof Http;
let server: Loopback;
const answers: number[] = [];

beforeAll(async () => {
  // Enabled as it is made: it patches node:http when the module is next required, as it
  // patches an application's on its first require.
  instrumentation = new HttpInstrumentation({ startOutgoingSpanHook: resendCountHook, disableIncomingRequestInstrumentation: true });
  instrumentation.setTracerProvider(sdk.tracerProvider);
  http = createRequire(import.meta.url)('node:http') as typeof Http;
  server = await startLoopback((_req, res) => {
    const status = answers.shift() ?? 500;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
  });
});
afterAll(async () => {
  instrumentation.disable();
  await server.close();
});

/** One GET with node:http: its body on a 2xx, an HttpStatusError-shaped failure otherwise. */
function get(url: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { signal }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 400) return resolve(body);
          reject(new HttpStatusError(new Response(body, { status }), 'GET'));
        });
      })
      .on('error', reject);
  });
}

describe('retry() with otelTelemetry() and the http instrumentation', () => {
  it('answers 503, 503, 200: three HTTP client spans under the call span, resend_count absent, 1, 2', async () => {
    answers.push(503, 503, 200);
    const telemetry = otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider() });
    const body = await retry((ctx) => get(`${server.url}/a`, ctx.signal), {
      backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' },
      telemetry,
      name: 'get-a',
    });
    expect(body).toBe('answer 200');

    await vi.waitFor(() => expect(sdk.spans()).toHaveLength(4));
    const spans = sdk.spans();
    const call = spans.find((s) => s.kind === SpanKind.INTERNAL);
    expect(call?.name).toBe('get-a');
    expect(call?.attributes['tenacious.attempts']).toBe(3);
    const sent = spans
      .filter((s) => s.kind === SpanKind.CLIENT)
      .sort((a, b) => a.startTime[1] - b.startTime[1] + 1e9 * (a.startTime[0] - b.startTime[0]));
    expect(sent.map((s) => s.attributes['http.response.status_code'] ?? s.attributes['http.status_code'])).toEqual([503, 503, 200]);
    expect(sent.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    for (const span of sent) expect(span.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
  });

  it('adds nothing to a request sent outside a retried call', async () => {
    answers.push(200);
    await get(`${server.url}/plain`, new AbortController().signal);
    await vi.waitFor(() => expect(sdk.spans()).toHaveLength(1));
    const [span] = sdk.spans();
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes['http.request.resend_count']).toBeUndefined();
    expect(span?.parentSpanContext).toBeUndefined();
  });
});
