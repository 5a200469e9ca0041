// 'tenacious/otel' against the real OpenTelemetry SDK: the call span, its attributes, events
// and status, the context its attempts run in, and the metrics a reader collects.
import { SpanKind, SpanStatusCode, context, metrics, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
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
    expect(span?.attributes).toEqual({ 'tenacious.attempts': 2, 'tenacious.outcome': 'attempts', 'error.type': 'ECONNRESET' });
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
