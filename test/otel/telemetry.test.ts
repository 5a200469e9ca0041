// 'tenacious/otel' against the real OpenTelemetry SDK: the call span, its attributes, events
// and status, the context its attempts run in, and the metrics a reader collects.
import { SpanKind, SpanStatusCode, context, metrics, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { RetryError, hedge, retry, withRetry } from '../../src/index.js';
import { gcs, iam, iamReadModifyWrite } from '../../src/google/index.js';
import { otelTelemetry, resendCountHook } from '../../src/otel/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';
import { summary, useSdk } from './sdk.js';

const clock = useVirtualClock();
const sdk = useSdk();
const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' as const };

/** A telemetry on the test's own providers. */
const telemetryNow = () => otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider() });

/** fn failing with `errors` in turn, then answering 'ok'. */
function scripted(...errors: unknown[]) {
  let n = 0;
  return () => {
    const error = errors[n++];
    if (error !== undefined) throw error;
    return 'ok';
  };
}

describe('otelTelemetry(): the call span', () => {
  it('makes one INTERNAL span per call, named after the operation, with its attempts, outcome and a retry event per retry', async () => {
    const telemetry = telemetryNow();
    const call = track(
      retry(scripted(httpError(503), httpError(503, { headers: { 'retry-after': '1' } })), { backoff, telemetry, name: 'users.get' }),
    );
    await clock.tickAsync(1100);
    expect(call.value).toBe('ok');
    const [span, ...others] = sdk.spans();
    expect(others).toEqual([]);
    expect(span?.name).toBe('users.get');
    expect(span?.kind).toBe(SpanKind.INTERNAL);
    expect(span?.attributes).toEqual({ 'tenacious.attempts': 3, 'tenacious.outcome': 'success' });
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    expect(span?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['tenacious.retry', { 'tenacious.attempt': 1, 'tenacious.delay_ms': 100, 'tenacious.delay_source': 'backoff', 'error.type': '503' }],
      ['tenacious.retry', { 'tenacious.attempt': 2, 'tenacious.delay_ms': 1000, 'tenacious.delay_source': 'server', 'error.type': '503' }],
    ]);
    // Virtual time: the span lasts the call's 1.1 s.
    expect(span?.duration).toEqual([1, 100_000_000]);
  });

  it('names a call without a name tenacious.retry, and on give-up sets error.type, the reason and status ERROR', async () => {
    const telemetry = telemetryNow();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const call = track(retry(scripted(reset, reset, reset), { backoff, maxAttempts: 2, telemetry }));
    await clock.tickAsync(100);
    expect(call.error).toBeInstanceOf(RetryError);
    const [span] = sdk.spans();
    expect(span?.name).toBe('tenacious.retry');
    expect(span?.attributes).toStrictEqual({ 'tenacious.attempts': 2, 'tenacious.outcome': 'attempts', 'error.type': 'ECONNRESET' });
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: (call.error as Error).message });
    expect(span?.events.map((e) => e.name)).toEqual(['tenacious.retry', 'exception']);
  });

  it("reports an error that is not retryable with its own class, as the call's outcome", async () => {
    const telemetry = telemetryNow();
    await expect(retry(scripted(new RangeError('bad page size')), { telemetry })).rejects.toThrow('bad page size');
    expect(sdk.spans()[0]?.attributes).toEqual({
      'tenacious.attempts': 1,
      'tenacious.outcome': 'not-retryable',
      'error.type': 'RangeError',
    });
  });

  it("makes a span that fn starts, before or after an await, the call span's child, and the call span the caller's", async () => {
    const telemetry = telemetryNow();
    const tracer = sdk.tracerProvider.getTracer('test');
    let n = 0;
    const fn = async () => {
      tracer.startSpan(`before await ${++n}`).end();
      await Promise.resolve();
      tracer.startSpan(`after await ${n}`).end();
      if (n === 1) throw httpError(503);
      return n;
    };
    const outer = tracer.startSpan('request handler');
    const call = track(context.with(trace.setSpan(context.active(), outer), () => retry(fn, { backoff, telemetry, name: 'load' })));
    await clock.tickAsync(100);
    outer.end();
    expect(call.value).toBe(2);
    const spans = sdk.spans();
    const byName = (name: string) => spans.find((s) => s.name === name);
    const callSpan = byName('load');
    expect(callSpan?.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    for (const name of ['before await 1', 'after await 1', 'before await 2', 'after await 2']) {
      expect(byName(name)?.parentSpanContext?.spanId, name).toBe(callSpan?.spanContext().spanId);
      expect(byName(name)?.spanContext().traceId, name).toBe(outer.spanContext().traceId);
    }
  });

  it('makes no span and records nothing without the option', async () => {
    const tracer = sdk.tracerProvider.getTracer('test');
    let parent: string | undefined;
    await retry(() => {
      const child = tracer.startSpan('child');
      parent = (child as unknown as ReadableSpan).parentSpanContext?.spanId;
      child.end();
      return resendCountHook();
    }).then((attributes) => expect(attributes).toEqual({}));
    expect(sdk.spans().map((s) => s.name)).toEqual(['child']);
    expect(parent).toBeUndefined();
    telemetryNow(); // instruments made, nothing recorded
    expect(await sdk.points('tenacious.call.duration')).toEqual([]);
  });

  it('puts the send number in the context of each attempt: resendCountHook reads 1, 2 for the resends', async () => {
    const telemetry = telemetryNow();
    const seen: unknown[] = [];
    const fn = scripted(httpError(503), httpError(503));
    const attempt = () => {
      seen.push(resendCountHook());
      return fn();
    };
    const call = track(retry(attempt, { backoff, telemetry }));
    await clock.tickAsync(300);
    expect(call.value).toBe('ok');
    expect(seen).toEqual([{}, { 'http.request.resend_count': 1 }, { 'http.request.resend_count': 2 }]);
    expect(resendCountHook()).toEqual({}); // outside the call
  });

  it('adds an event per hedged copy, and counts each copy as a send', async () => {
    const telemetry = telemetryNow();
    const seen: unknown[] = [];
    const fn = ({ copy }: { copy: number }) => {
      seen.push(resendCountHook());
      return new Promise((resolve) => setTimeout(resolve, copy === 1 ? 500 : 10, copy));
    };
    const call = track(hedge(fn, { delayMs: 50, telemetry, name: 'get' }));
    await clock.tickAsync(100);
    expect(call.value).toBe(2);
    await clock.tickAsync(500); // the loser's timer
    expect(seen).toEqual([{}, { 'http.request.resend_count': 1 }]);
    const [span] = sdk.spans();
    expect(span?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['tenacious.hedge', { 'tenacious.attempt': 1, 'tenacious.copy': 2, 'tenacious.hedge_reason': 'delay' }],
    ]);
    expect(span?.attributes).toMatchObject({ 'tenacious.attempts': 1, 'tenacious.outcome': 'success' });
  });

  it("takes the service and the operation from the Google presets' options, and a withRetry function's calls each get a span", async () => {
    const telemetry = telemetryNow();
    const quick = { backoff: { initialDelayMs: 1 }, maxAttempts: 1, telemetry };
    await retry(() => 1, { ...gcs({ operation: 'objects.get' }), ...quick });
    // Given to the preset itself, as any other option: passed through.
    await retry(() => 1, gcs({ operation: 'objects.list', telemetry }));
    await retry(() => 1, iam({ telemetry }));
    await retry(() => 1, { ...iam(), ...quick, name: 'projects.getIamPolicy' });
    const list = withRetry(async (prefix: string) => [prefix], { telemetry, name: 'list', service: 'storage' });
    await list('a/');
    await list('b/');
    let conflicts = 0;
    const written = track(
      iamReadModifyWrite(
        {
          read: async () => ({ etag: conflicts }),
          modify: (policy) => ({ ...policy, bindings: 1 }),
          write: async () => {
            if (conflicts++ === 0) throw Object.assign(new Error('concurrent policy changes'), { code: 409, status: 'ABORTED' });
            return 'written';
          },
        },
        { telemetry, name: 'setIamPolicy', backoff: { initialDelayMs: 1, maxDelayMs: 1 } },
      ),
    );
    await clock.tickAsync(1);
    expect(written.value).toBe('written');
    expect(sdk.spans().map((s) => [s.name, s.attributes['gcp.client.service'], s.attributes['tenacious.attempts']])).toEqual([
      ['objects.get', 'storage', 1],
      ['objects.list', 'storage', 1],
      ['tenacious.retry', 'iam', 1],
      ['projects.getIamPolicy', 'iam', 1],
      ['list', 'storage', 1],
      ['list', 'storage', 1],
      ['setIamPolicy', 'iam', 2],
    ]);
  });
  it('makes its spans with the tracer named tenacious', async () => {
    await retry(() => 1, { telemetry: telemetryNow() });
    expect(sdk.spans().map((s) => s.instrumentationScope.name)).toEqual(['tenacious']);
  });

  it('adds an event per progress report, with the attempt that made it', async () => {
    const telemetry = telemetryNow();
    let n = 0;
    const call = track(
      retry(
        (ctx) => {
          ctx.progress();
          if (++n === 1) throw httpError(503);
          return 'ok';
        },
        { backoff, telemetry },
      ),
    );
    await clock.tickAsync(100);
    expect(call.value).toBe('ok');
    expect(sdk.spans()[0]?.events.map((e) => [e.name, e.attributes?.['tenacious.attempt']])).toEqual([
      ['tenacious.progress', 1],
      ['tenacious.retry', 1],
      ['tenacious.progress', 2],
    ]);
  });

  it('runs a resumed download under a span of its own, a child of the ended one, and records the call metrics once', async () => {
    // A 200 of 20 bytes whose body breaks after 10; a request with a Range gets the other 10.
    const fetchFn: typeof fetch = async (_input, init) => {
      const resumed = new Headers(init?.headers).get('range') !== null;
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
    const telemetry = telemetryNow();
    const options = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const }, fetch: fetchFn, telemetry };
    const res = track(retryFetch('http://x.test/o', undefined, { ...options, name: 'objects.get', service: 'storage' }));
    await clock.tickAsync(0);
    const text = track((res.value as Response).text());
    await clock.tickAsync(10);
    expect(text.value).toBe(`${'a'.repeat(10)}${'b'.repeat(10)}`);

    const [first, resumed, ...others] = sdk.spans();
    expect(others).toEqual([]);
    expect(first?.name).toBe('objects.get');
    expect(first?.attributes).toStrictEqual({ 'gcp.client.service': 'storage', 'tenacious.attempts': 1, 'tenacious.outcome': 'success' });
    expect(first?.events).toEqual([]);
    expect(resumed?.name).toBe('objects.get');
    expect(resumed?.kind).toBe(SpanKind.INTERNAL);
    expect(resumed?.parentSpanContext?.spanId).toBe(first?.spanContext().spanId);
    expect(resumed?.spanContext().traceId).toBe(first?.spanContext().traceId);
    expect(resumed?.attributes).toStrictEqual({
      'gcp.client.service': 'storage',
      'tenacious.resumed': true,
      'tenacious.attempts': 2,
      'tenacious.outcome': 'success',
    });
    expect(resumed?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['tenacious.resume', { 'tenacious.attempt': 1, 'error.type': 'TypeError' }],
      [
        'tenacious.retry',
        { 'tenacious.attempt': 1, 'tenacious.delay_ms': 1, 'tenacious.delay_source': 'backoff', 'error.type': 'TypeError' },
      ],
    ]);
    // The call's metrics once, at its first outcome; the resumed run counts as events.
    const once = async (name: string) => (await sdk.points(name)).map((p) => (p.value as { count: number }).count);
    expect(await once('tenacious.call.duration')).toEqual([1]);
    expect(await once('tenacious.call.retries')).toEqual([1]);
    expect(await once('tenacious.call.retry_delay')).toEqual([]);
    const events = await sdk.points('tenacious.call.events');
    expect(Object.fromEntries(events.map((p) => [p.attributes['tenacious.event'], p.value]))).toEqual({
      attempt: 2,
      retry: 1,
      resume: 1,
      success: 2,
    });
  });

  it('a continuation (a part that ended whole, short of the object) resumes with no error.type', async () => {
    // 20 bytes: the first answer breaks after 10; the server answers the rest in two parts of 5.
    const fetchFn: typeof fetch = async (_input, init) => {
      const range = new Headers(init?.headers).get('range');
      const from = range === null ? 0 : Number(range.slice('bytes='.length, -1));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(range === null ? 10 : 5).fill(0x61 + from / 5));
        },
        pull(controller) {
          if (range === null) controller.error(new TypeError('terminated'));
          else controller.close();
        },
      });
      return range === null
        ? new Response(body, { status: 200, headers: { etag: '"v1"', 'content-length': '20' } })
        : new Response(body, { status: 206, headers: { etag: '"v1"', 'content-range': `bytes ${from}-${from + 4}/20` } });
    };
    const backoff = { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const };
    const res = track(retryFetch('http://x.test/o', undefined, { fetch: fetchFn, backoff, telemetry: telemetryNow(), name: 'o' }));
    await clock.tickAsync(0);
    const text = track((res.value as Response).text());
    await clock.tickAsync(10);
    expect(text.value).toBe(`${'a'.repeat(10)}${'c'.repeat(5)}${'d'.repeat(5)}`);
    const [, afterBreak, continued, ...others] = sdk.spans();
    expect(others).toEqual([]);
    expect(afterBreak?.events[0]?.attributes).toEqual({ 'tenacious.attempt': 1, 'error.type': 'TypeError' });
    expect(continued?.events.map((e) => [e.name, e.attributes])).toEqual([['tenacious.resume', { 'tenacious.attempt': 2 }]]);
  });
});

describe('otelTelemetry(): metrics', () => {
  it('records the call duration by outcome, its retries, its total wait and each attempt, in seconds', async () => {
    const telemetry = telemetryNow();
    const slow = (ms: number, error?: unknown) => () =>
      new Promise((resolve, reject) => setTimeout(() => (error ? reject(error) : resolve('ok')), ms));
    const steps = [slow(50, httpError(503)), slow(20)];
    const first = track(retry(() => steps.shift()?.(), { backoff, telemetry, name: 'get', service: 'storage' }));
    await clock.tickAsync(170); // 50 ms, a 100 ms wait, 20 ms
    expect(first.value).toBe('ok');
    const second = track(retry(slow(10, httpError(404)), { backoff, telemetry, name: 'get', service: 'storage' }));
    await clock.tickAsync(10);
    expect(second.state).toBe('rejected');

    const labels = { 'tenacious.operation': 'get', 'gcp.client.service': 'storage' };
    const duration = await sdk.points('tenacious.call.duration');
    expect(duration.map((p) => [p.attributes, summary(p)])).toEqual([
      [
        { ...labels, 'tenacious.outcome': 'success' },
        { count: 1, sum: 0.17, min: 0.17, max: 0.17 },
      ],
      [
        { ...labels, 'tenacious.outcome': 'not-retryable', 'error.type': '404' },
        { count: 1, sum: 0.01, min: 0.01, max: 0.01 },
      ],
    ]);
    const retries = await sdk.points('tenacious.call.retries');
    expect(retries.map((p) => [p.attributes, summary(p)])).toEqual([[labels, { count: 2, sum: 1, min: 0, max: 1 }]]);
    const delay = await sdk.points('tenacious.call.retry_delay');
    expect(delay.map((p) => [p.attributes, summary(p)])).toEqual([[labels, { count: 1, sum: 0.1, min: 0.1, max: 0.1 }]]);
    const attempts = await sdk.points('tenacious.attempt.duration');
    expect(attempts.map((p) => [p.attributes['tenacious.attempt.outcome'], summary(p)])).toEqual([
      ['failure', { count: 2, sum: expect.closeTo(0.06, 9), min: 0.01, max: 0.05 }],
      ['success', { count: 1, sum: 0.02, min: 0.02, max: 0.02 }],
    ]);
    const events = await sdk.points('tenacious.call.events');
    expect(Object.fromEntries(events.map((p) => [p.attributes['tenacious.event'], p.value]))).toEqual({
      attempt: 3,
      retry: 1,
      success: 1,
      'give-up': 1,
    });
  });
  it('labels the metrics of a call without a name or a service with neither', async () => {
    const telemetry = telemetryNow();
    await retry(() => 1, { telemetry });
    const [duration] = await sdk.points('tenacious.call.duration');
    expect(Object.keys(duration?.attributes ?? {})).toEqual(['tenacious.outcome']);
    const [retries] = await sdk.points('tenacious.call.retries');
    expect(Object.keys(retries?.attributes ?? {})).toEqual([]);
  });

  it('records no attempt duration for the wait in which a call ended, nor an exception for a reason that is not an Error', async () => {
    const telemetry = telemetryNow();
    const abort = new AbortController();
    const fail = () => new Promise((_resolve, reject) => setTimeout(() => reject(httpError(503)), 10));
    const call = track(retry(fail, { backoff, telemetry, signal: abort.signal }));
    await clock.tickAsync(50); // the attempt's 10 ms, then 40 ms of the 100 ms wait
    abort.abort('shutting down');
    await clock.tickAsync(0);
    expect(call.error).toBe('shutting down');
    const [span] = sdk.spans();
    expect(span?.attributes).toStrictEqual({ 'tenacious.attempts': 1, 'tenacious.outcome': 'aborted', 'error.type': '_OTHER' });
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'shutting down' });
    expect(span?.events.map((e) => e.name)).toEqual(['tenacious.retry']);
    const attempts = await sdk.points('tenacious.attempt.duration');
    expect(attempts.map((p) => [p.attributes['tenacious.attempt.outcome'], summary(p)])).toEqual([
      ['failure', { count: 1, sum: 0.01, min: 0.01, max: 0.01 }],
    ]);
  });
});

describe('otelTelemetry(): the global meter provider', () => {
  it('follows a meter provider registered after the telemetry was made, from its next call on', async () => {
    const telemetry = otelTelemetry({ tracerProvider: sdk.tracerProvider });
    await retry(() => 1, { telemetry }); // the API's no-op meter: nothing to collect
    metrics.setGlobalMeterProvider(sdk.meterProvider());
    try {
      await retry(() => 2, { telemetry });
      const duration = await sdk.points('tenacious.call.duration');
      expect(duration.map((p) => (p.value as { count: number }).count)).toEqual([1]);
    } finally {
      metrics.disable();
    }
  });
});

describe('otelTelemetry(): options', () => {
  it('refuses what is not a provider, naming the field and the value', () => {
    expect(() => otelTelemetry({ tracerProvider: {} as never })).toThrow(
      'otelTelemetry: options.tracerProvider must be an OpenTelemetry TracerProvider (getTracer), got {}',
    );
    expect(() => otelTelemetry({ meterProvider: 'global' as never })).toThrow(
      'otelTelemetry: options.meterProvider must be an OpenTelemetry MeterProvider (getMeter), got "global"',
    );
    expect(() => otelTelemetry({ meterProvider: sdk.tracerProvider as never })).toThrow(
      /otelTelemetry: options.meterProvider must be an OpenTelemetry MeterProvider \(getMeter\), got /,
    );
    expect(() => otelTelemetry({ traceProvider: sdk.tracerProvider } as never)).toThrow(/otelTelemetry: unknown option "traceProvider"/);
    expect(() => otelTelemetry(null as never)).toThrow(/otelTelemetry: options must be/);
  });

  it('uses the global providers by default, and a call runs unobserved when a provider throws', async () => {
    await retry(() => 1, { telemetry: otelTelemetry() });
    expect(sdk.spans().map((s) => s.name)).toEqual(['tenacious.retry']);
    const broken = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('exporter down');
        },
      }),
    } as never;
    await expect(retry(() => 2, { telemetry: otelTelemetry({ tracerProvider: broken }) })).resolves.toBe(2);
  });
});
