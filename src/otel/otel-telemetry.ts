/**
 * OpenTelemetry from the engine's event stream: `otelTelemetry()` makes the value of the
 * `telemetry` option. One span per call (kind INTERNAL: the per-attempt HTTP or RPC spans are
 * the instrumentations'), every attempt run inside its context, span events for retries,
 * hedged copies, progress and resumes, and the metrics of instruments.ts. Nothing here decides
 * anything about the call: it only listens, and it never throws into it.
 */
import type { Attributes, Context, MeterProvider, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import type { AttemptContext, CallEvent, CallTelemetry, Telemetry, TelemetryCall } from '../types.js';
import { type FieldRules, hasMethods, readChecked } from '../util/check.js';
import { api } from './api.js';
import { errorType } from './error-type.js';
import { type Instruments, instrumentsFor } from './instruments.js';
import { SEND_KEY } from './resend-count.js';

// Read off the namespace once: every call span uses them, and a local is found at once.
const { context, trace, SpanKind, SpanStatusCode } = api;

/**
 * Where `otelTelemetry()` sends what it records. Each defaults to the global provider
 * registered with the OpenTelemetry API (`trace.setGlobalTracerProvider`,
 * `metrics.setGlobalMeterProvider`, or an SDK's `register()`), looked up at each call.
 *
 * @example
 * const options: OtelTelemetryOptions = { tracerProvider: provider, meterProvider: new MeterProvider({ readers: [reader] }) };
 */
export interface OtelTelemetryOptions {
  /** The tracer provider of the call spans (tracer `tenacious`). */
  tracerProvider?: TracerProvider;
  /** The meter provider of the metrics (meter `tenacious`). */
  meterProvider?: MeterProvider;
}

const RULES: FieldRules = {
  tracerProvider: { ok: (v) => hasMethods(v, ['getTracer']), rule: 'be an OpenTelemetry TracerProvider (getTracer)' },
  meterProvider: { ok: (v) => hasMethods(v, ['getMeter']), rule: 'be an OpenTelemetry MeterProvider (getMeter)' },
};

/** The span name of a call given no `name`. */
const DEFAULT_NAME = 'tenacious.retry';

/**
 * OpenTelemetry traces and metrics for the calls given it as their `telemetry` option
 * (`retry`, `withRetry`, `retryFetch`, `hedge`, the Google presets and uploads):
 *
 * - one span per call, kind INTERNAL, named after the `name` option (else `tenacious.retry`),
 *   a child of the context the call was made in, with `tenacious.attempts`, `tenacious.outcome`
 *   (`success` or the give-up reason), and on give-up `error.type` and status ERROR;
 *   `gcp.client.service` from the `service` option (the Google presets set it);
 * - a span event per retry (`tenacious.retry`: the attempt that failed, the delay and its
 *   source), per hedged copy, per progress report and per resume;
 * - every attempt, and each hedged copy, runs inside the call span's context: a span that `fn`
 *   or an instrumented client starts is its child, and `resendCountHook` finds the send's number;
 * - the metrics `tenacious.call.duration`, `tenacious.call.retries`, `tenacious.call.retry_delay`,
 *   `tenacious.attempt.duration` and `tenacious.call.events` (docs/telemetry.md).
 *
 * Needs `@opentelemetry/api` 1.x (an optional peer dependency). Bad options throw a TypeError
 * naming the field, now.
 *
 * @example
 * import { retry } from 'tenacious';
 * import { otelTelemetry } from 'tenacious/otel';
 *
 * const telemetry = otelTelemetry(); // the global tracer and meter providers
 * const user = await retry(({ signal }) => fetchJson(`/users/${id}`, { signal }), { telemetry, name: 'users.get' });
 */
export function otelTelemetry(options?: OtelTelemetryOptions): Telemetry {
  const o = readChecked('otelTelemetry', options === undefined ? {} : options, RULES) as OtelTelemetryOptions;
  const { tracerProvider } = o;
  const tracers = tracerProvider ?? trace; // the API's global tracer follows a later registration
  const instruments = instrumentsFor(o.meterProvider);
  return (call) => {
    try {
      const metrics = instruments();
      // No SDK behind either provider: the span and the metrics would be made and dropped, and
      // the span would put nothing in the context that the caller's does not hold already.
      if (metrics.silent && tracesNothing(tracerProvider ?? trace.getTracerProvider())) return undefined;
      return new CallSpan(call, tracers.getTracer('tenacious'), metrics.instruments);
    } catch {
      return UNOBSERVED; // a broken provider must not break the call
    }
  };
}

/** The API's no-op tracer provider: what the global one delegates to while no SDK is registered. */
const NO_TRACERS = new api.ProxyTracerProvider().getDelegate();

/** True for the API's no-op tracer provider, or its global proxy while it delegates to that. */
function tracesNothing(provider: TracerProvider): boolean {
  return (provider instanceof api.ProxyTracerProvider ? provider.getDelegate() : provider) === NO_TRACERS;
}

/** The attributes a call span starts with. */
function startAttributes({ service }: TelemetryCall): Attributes {
  // The SDK drops an undefined attribute value; another tracer might keep it (test/otel/recording-provider.test.ts).
  return service === undefined ? {} : { 'gcp.client.service': service };
}

const UNOBSERVED: CallTelemetry = { event() {}, attempt: (_ctx, run) => run() };

/** The telemetry of one call: its span, and what its metrics need to remember between events. */
class CallSpan implements CallTelemetry {
  /** The span of the call (of its current run, once a settled call was resumed). */
  #span: Span;
  /** The context the attempts run in: the caller's, with the call span. */
  #context: Context;
  /** Sends so far: plain attempts and hedged copies (resendCountHook's number). */
  #sends = 0;
  /** Retries so far, and the milliseconds waited before them (the call's metrics). */
  #retries = 0;
  #waitedMs = 0;
  /** When the running attempt began (ms since the call began); undefined between attempts. */
  #attemptAt: number | undefined = undefined;
  /** The call's metrics were recorded: a resumed run's end adds to the events only. */
  #recorded = false;
  /** The attributes every metric of the call carries: operation and service, when known. */
  readonly #labels: Attributes;

  constructor(
    readonly call: TelemetryCall,
    readonly tracer: Tracer,
    readonly instruments: Instruments,
  ) {
    // The caller's context when the call is made: the call span is a child of what it runs in.
    this.#span = tracer.startSpan(call.name ?? DEFAULT_NAME, { kind: SpanKind.INTERNAL, attributes: startAttributes(call) });
    this.#context = trace.setSpan(context.active(), this.#span);
    const labels: Attributes = {};
    if (call.name !== undefined) labels['tenacious.operation'] = call.name;
    if (call.service !== undefined) labels['gcp.client.service'] = call.service;
    this.#labels = labels;
  }

  attempt<R>(_ctx: AttemptContext, run: () => R): R {
    return context.with(this.#context.setValue(SEND_KEY, ++this.#sends), run);
  }

  event(e: CallEvent): void {
    this.instruments.events.add(1, { ...this.#labels, 'tenacious.event': e.type });
    switch (e.type) {
      case 'attempt':
        this.#attemptAt = e.elapsedMs;
        return;
      case 'retry':
        this.#attemptEnded(e.elapsedMs, 'failure');
        this.#retries++;
        this.#waitedMs += e.delayMs;
        this.#span.addEvent('tenacious.retry', {
          'tenacious.attempt': e.attempt,
          'tenacious.delay_ms': e.delayMs,
          'tenacious.delay_source': e.source,
          'error.type': errorType(e.error),
        });
        return;
      case 'hedge':
        this.#span.addEvent('tenacious.hedge', {
          'tenacious.attempt': e.attempt,
          'tenacious.copy': e.copy,
          'tenacious.hedge_reason': e.reason,
        });
        return;
      case 'progress':
        this.#span.addEvent('tenacious.progress', { 'tenacious.attempt': e.attempt });
        return;
      case 'resume':
        return this.#resumed(e.attempt, e.error);
      case 'success':
        this.#attemptEnded(e.elapsedMs, 'success');
        return this.#ended(e.elapsedMs, e.attempts, 'success', undefined);
      case 'give-up':
        this.#attemptEnded(e.elapsedMs, 'failure');
        return this.#ended(e.elapsedMs, e.attempts, e.reason, e.error);
    }
  }

  #attemptEnded(elapsedMs: number, outcome: 'success' | 'failure'): void {
    // The SDK's histograms drop the NaN this would record; another meter might keep it (test/otel/recording-provider.test.ts).
    if (this.#attemptAt === undefined) return; // the call ended while it waited
    this.instruments.attemptDuration.record((elapsedMs - this.#attemptAt) / 1000, {
      ...this.#labels,
      'tenacious.attempt.outcome': outcome,
    });
    this.#attemptAt = undefined;
  }

  /** A run of the call ended: the span ends; the call's metrics are recorded once, at its first outcome. */
  #ended(elapsedMs: number, attempts: number, outcome: string, error: unknown): void {
    const span = this.#span;
    span.setAttribute('tenacious.attempts', attempts);
    span.setAttribute('tenacious.outcome', outcome);
    const labels: Attributes = { ...this.#labels, 'tenacious.outcome': outcome };
    if (outcome !== 'success') {
      const type = errorType(error);
      span.setAttribute('error.type', type);
      labels['error.type'] = type;
      if (error instanceof Error) span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    span.end();
    if (this.#recorded) return;
    this.#recorded = true;
    const { callDuration, callRetries, retryDelay } = this.instruments;
    callDuration.record(elapsedMs / 1000, labels);
    callRetries.record(this.#retries, this.#labels);
    if (this.#retries > 0) retryDelay.record(this.#waitedMs / 1000, this.#labels);
  }

  /**
   * A settled call runs again (a download whose body broke): its span has ended (only a run that
   * succeeded is resumed, and its success ended the span), so the new run gets a span of its own,
   * a child of the ended one (the same trace, under the same call), where its attempts run.
   */
  #resumed(attempt: number, error: unknown): void {
    this.#span = this.tracer.startSpan(
      this.call.name ?? DEFAULT_NAME,
      { kind: SpanKind.INTERNAL, attributes: { ...startAttributes(this.call), 'tenacious.resumed': true } },
      this.#context,
    );
    this.#context = trace.setSpan(this.#context, this.#span);
    // A continuation (a part that ended whole, short of the object) broke nothing: no error to name.
    this.#span.addEvent('tenacious.resume', {
      'tenacious.attempt': attempt,
      ...(error !== undefined && { 'error.type': errorType(error) }),
    });
  }
}
