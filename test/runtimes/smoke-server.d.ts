// Types of smoke-server.js (plain JavaScript so that every runtime runs it as it is).

/** The smoke suite's test server, a web-standard fetch handler. */
export function handle(request: Request): Promise<Response>;
