/**
 * tenacious/otel: OpenTelemetry traces and metrics of retried calls, from the engine's event
 * stream, for the `telemetry` option. Imported apart from `tenacious`, with
 * `@opentelemetry/api` as an optional peer dependency: an application that does not import it
 * needs neither, and bundles none of it.
 *
 * @example
 * import { retry } from 'tenacious';
 * import { otelTelemetry, resendCountHook } from 'tenacious/otel';
 *
 * @module tenacious/otel
 */
export { type OtelTelemetryOptions, otelTelemetry } from './otel-telemetry.js';
export { resendCountHook } from './resend-count.js';
export { type FleetToObserve, observeFleet } from './fleet-gauges.js';
