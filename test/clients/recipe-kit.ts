// What the client recipe tests share: a loopback server that answers from a script, and the
// check that a test runs the very code docs/recipes.md shows (not a look-alike).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect } from 'vitest';
import type { RetryOptions } from '../../src/index.js';
import {
  type LoopbackServer,
  isLoopback,
  resetConnection,
  sendGoogleError,
  sendJson,
  startHttpServer,
  watchConnections,
} from './loopback.js';

/** One scripted answer: an HTTP status, a TCP reset, or no answer at all (the request hangs). */
export type Answer = number | 'reset' | 'stall';

/** A loopback server answering from a script, and what happened to the requests it left hanging. */
export interface ScriptedServer extends LoopbackServer {
  /** Resolves when the first request the script stalls has arrived. */
  readonly stalled: Promise<void>;
  /** Resolves when the socket of that stalled request has closed: the client gave up on it. */
  readonly stalledSocketClosed: Promise<void>;
}

/** Tiny waits: these tests count requests, the waits themselves are tested with virtual time elsewhere. */
export const fast: RetryOptions = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } };

/** The statuses every client's real error is classified by, and whether `isTransient` retries each. */
export const STATUS_CLASSES: ReadonlyArray<readonly [number, boolean]> = [
  [408, true],
  [429, true],
  [500, true],
  [502, true],
  [503, true],
  [504, true],
  [400, false],
  [401, false],
  [403, false],
  [404, false],
  [412, false],
];

/**
 * Registers the hooks a client test file needs and returns how to start a {@link scriptedServer}:
 * each server is closed after its test, and every connection the test made must have gone to
 * 127.0.0.1.
 */
export function useScriptedServers(): (script: readonly Answer[], after?: Answer, body?: unknown) => Promise<ScriptedServer> {
  const servers: ScriptedServer[] = [];
  let connections: ReturnType<typeof watchConnections>;
  beforeEach(() => {
    connections = watchConnections();
  });
  afterEach(async () => {
    connections.restore();
    await Promise.all(servers.splice(0).map((server) => server.close()));
    expect(connections.hosts.every(isLoopback)).toBe(true);
  });
  return async (script, after, body) => {
    const server = await scriptedServer(script, after, body);
    servers.push(server);
    return server;
  };
}

/** The JSON body of the 200s the scripted server sends, unless told another. */
export const ITEM = { id: 42, name: 'loopback item' } as const;

/**
 * Starts a server on 127.0.0.1 that answers the n-th request with `script[n]`, and with
 * `after` once the script has run out (200 with `body`, {@link ITEM} by default). Statuses other than
 * 200 get a Google-style JSON error body and `Retry-After: 0`, so that a client that honours
 * the header does not slow the test down.
 */
export async function scriptedServer(script: readonly Answer[], after: Answer = 200, body: unknown = ITEM): Promise<ScriptedServer> {
  let stalledArrived: () => void = () => {};
  let stalledClosed: () => void = () => {};
  const stalled = new Promise<void>((resolve) => (stalledArrived = resolve));
  const stalledSocketClosed = new Promise<void>((resolve) => (stalledClosed = resolve));
  let answered = 0;
  const server = await startHttpServer((_seen, res, req) => {
    const answer = script[answered++] ?? after;
    if (answer === 'reset') return resetConnection(req);
    if (answer === 'stall') {
      req.socket.once('close', stalledClosed);
      return stalledArrived();
    }
    if (answer === 200) return sendJson(res, body);
    sendGoogleError(res, answer, { headers: { 'retry-after': '0' } });
  });
  return Object.assign(server, { stalled, stalledSocketClosed });
}

/** Whitespace-insensitive form of a piece of code, for comparing a test's copy with docs/recipes.md's. */
function normalized(code: string): string {
  return code.replace(/\s+/g, ' ').trim();
}

/** The ```ts blocks of docs/recipes.md, each normalized. */
function recipeBlocks(): string[] {
  const markdown = readFileSync(fileURLToPath(new URL('../../docs/recipes.md', import.meta.url)), 'utf8');
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => normalized(m[1] ?? ''));
}

/**
 * The code between `// recipe:begin` and `// recipe:end` in a test file (several regions
 * allowed), and whether each region appears, word for word up to whitespace, in one ```ts block
 * of the recipes. The tests run these regions; this proves they are what users copy.
 */
export function recipeRegionsOf(testFileUrl: string): Array<{ code: string; shown: boolean }> {
  const source = readFileSync(fileURLToPath(testFileUrl), 'utf8');
  const blocks = recipeBlocks();
  return [...source.matchAll(/\/\/ recipe:begin\n([\s\S]*?)\/\/ recipe:end/g)].map((m) => {
    const code = normalized(m[1] ?? '');
    return { code, shown: code.length > 0 && blocks.some((block) => block.includes(code)) };
  });
}

/** Whether `code` appears, word for word up to whitespace, in one ```ts block of the recipes. */
export function recipesShow(code: string): boolean {
  const wanted = normalized(code);
  return recipeBlocks().some((block) => block.includes(wanted));
}
