/**
 * `@opentelemetry/api`, the optional peer dependency of tenacious/otel, loaded in this one place:
 * a project without it gets an error naming the package and the command that installs it
 * (`peerMissing`), from `import` and `require` alike, rather than the module system's bare
 * "Cannot find module". This is the ES module's form, a top-level await; the CommonJS build
 * replaces this file with a `require` in a `try` that throws the same error (tsup.config.ts).
 *
 * @internal
 */
import type * as OpenTelemetry from '@opentelemetry/api';
import { peerMissing } from '../util/peer.js';

/** The API's namespace: its globals (`context`, `trace`, `metrics`) and helpers. */
// Stryker disable next-line BlockStatement: tested by test/otel/api.test.ts, which the mutation run leaves out (it reloads modules with vi.doMock, vitest.mutation.config.ts)
export const api: typeof OpenTelemetry = await import('@opentelemetry/api').catch((error: unknown) => {
  // Stryker disable next-line StringLiteral: tested by test/otel/api.test.ts, which the mutation run leaves out (it reloads modules with vi.doMock, vitest.mutation.config.ts)
  throw peerMissing('tenacious/otel', '@opentelemetry/api', error);
});
