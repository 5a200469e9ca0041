// Types of smoke.js (plain JavaScript so that every runtime runs it as it is).

/** The harness's fault server (fault-server.mjs) and an origin on which nothing listens. */
export interface Network {
  faults: string;
  refused: string;
}

/** Runs every case against `lib` (the exports of `tenacious`, `tenacious/fetch` and `tenacious/google`, merged) and the server at `base`. */
export function smoke(lib: unknown, base: string, id: string, network: Network): Promise<Record<string, unknown>>;

/** `smoke`, with a failure reported as `{ failed }` instead of a rejection. */
export function report(
  lib: unknown,
  base: string,
  id: string,
  network: Network,
): Promise<{ cases?: Record<string, unknown>; failed?: string }>;
