/**
 * Retries visible on the HTTP client spans. OpenTelemetry's HTTP client conventions ask for
 * one span per attempt, each resend carrying `http.request.resend_count`; the undici and http
 * instrumentations make the span but do not know a retry from a new request. The call's
 * telemetry puts the number of the send into the context each attempt runs in, and
 * `resendCountHook` reads it from there when the instrumentation starts its span.
 */
import type { Attributes } from '@opentelemetry/api';
import { api } from './api.js';

/** The context value: which send of the call runs in this context (1 for the first). @internal */
export const SEND_KEY: symbol = api.createContextKey('tenacious send');

/**
 * A `startSpanHook` for `UndiciInstrumentation` (fetch) and a `startOutgoingSpanHook` for
 * `HttpInstrumentation` (node:http): the HTTP client span of a request sent inside a retried
 * call gets `http.request.resend_count` = the number of times the call sent before (left out
 * for the first send, as the conventions ask). Each hedged copy counts as a send. Outside a
 * call made with `otelTelemetry()` it adds nothing.
 *
 * @example
 * import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
 * import { registerInstrumentations } from '@opentelemetry/instrumentation';
 * import { resendCountHook } from 'tenacious/otel';
 *
 * registerInstrumentations({ instrumentations: [new UndiciInstrumentation({ startSpanHook: resendCountHook })] });
 */
export function resendCountHook(_request?: unknown): Attributes {
  const send = api.context.active().getValue(SEND_KEY);
  // Only numbers are put under SEND_KEY; outside a call there is none, and undefined > 1 is false.
  return (send as number) > 1 ? { 'http.request.resend_count': (send as number) - 1 } : {};
}
