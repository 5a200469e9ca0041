// Types of node-server.mjs (plain JavaScript so that the Node targets run it as it is).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Serves `handle` on 127.0.0.1; `extra` may answer a request itself (returning true) first. */
export function serve(
  handle: (request: Request) => Response | Promise<Response>,
  options?: { port?: number; extra?: (req: IncomingMessage, res: ServerResponse) => Promise<true | undefined> },
): Promise<{ origin: string; close(): Promise<void> }>;
