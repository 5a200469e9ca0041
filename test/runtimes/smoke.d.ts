// Types of smoke.js (plain JavaScript so that every runtime runs it as it is).

/** Runs every case against `lib` and the server at `base`. */
export function smoke(lib: unknown, base: string, id?: string): Promise<Record<string, unknown>>;

/** `smoke`, with a failure reported as `{ failed }` instead of a rejection. */
export function report(lib: unknown, base: string, id?: string): Promise<{ cases?: Record<string, unknown>; failed?: string }>;
