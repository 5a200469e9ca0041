// Types of fault-server.mjs (plain JavaScript, as the other servers of the suite).

/** Starts the fault server on 127.0.0.1 at a free port. */
export function serveFaults(): Promise<{ origin: string; close(): Promise<void> }>;

/** A loopback origin on which nothing listens. */
export function refusedOrigin(): Promise<string>;
