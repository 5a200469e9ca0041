// otelTelemetry() where no OpenTelemetry SDK is registered: nothing would record a call, so it
// declines each one (the call runs as one without telemetry), and it records again from the
// next call once an SDK registers a tracer or a meter provider, globally or passed in.
import { ProxyTracerProvider, metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { retry } from '../../src/index.js';
import { otelTelemetry } from '../../src/otel/index.js';
import { collectingProvider } from './sdk.js';

const CALL = { name: 'users.get', service: undefined };

afterEach(() => {
  trace.disable();
  metrics.disable();
});

/** A tracer provider of the real SDK, and the spans it ended. */
function recordingTracers() {
  const exporter = new InMemorySpanExporter();
  return { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }), exporter };
}

describe('otelTelemetry() without an SDK', () => {
  it('declines each call while the global providers are the API no-op ones; the call runs and ends as without', async () => {
    const telemetry = otelTelemetry();
    expect(telemetry(CALL)).toBeUndefined();
    const events: string[] = [];
    await expect(retry(() => 'ok', { telemetry, onEvent: (e) => events.push(e.type) })).resolves.toBe('ok');
    expect(events).toEqual(['attempt', 'success']);
    // Passed in, the API's own no-op provider (a proxy with nothing behind it) is no SDK either.
    expect(otelTelemetry({ tracerProvider: new ProxyTracerProvider() })(CALL)).toBeUndefined();
  });

  it('records from the next call once an SDK registers a global tracer provider, and declines again once it is gone', async () => {
    const telemetry = otelTelemetry();
    const { tracerProvider, exporter } = recordingTracers();
    trace.setGlobalTracerProvider(tracerProvider);
    await retry(() => 'ok', { telemetry, name: 'users.get' });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['users.get']);
    trace.disable();
    expect(telemetry(CALL)).toBeUndefined();
  });

  it('records with a tracer provider passed in, the global ones being no-ops', async () => {
    const { tracerProvider, exporter } = recordingTracers();
    await retry(() => 'ok', { telemetry: otelTelemetry({ tracerProvider }), name: 'users.get' });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['users.get']);
  });

  it('records metrics with a meter provider alone, passed in or registered globally, with no tracer behind', async () => {
    const passed = collectingProvider();
    await retry(() => 'ok', { telemetry: otelTelemetry({ meterProvider: passed.meterProvider }) });
    expect((await passed.metrics()).map((m) => m.descriptor.name)).toContain('tenacious.call.duration');

    const telemetry = otelTelemetry();
    const global = collectingProvider();
    metrics.setGlobalMeterProvider(global.meterProvider);
    await retry(() => 'ok', { telemetry });
    expect((await global.metrics()).map((m) => m.descriptor.name)).toContain('tenacious.call.duration');
  });
});
