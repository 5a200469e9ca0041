/**
 * Heap bytes per sleeping retry: 50,000 calls whose operation failed once and which now wait
 * a long delay (60 s) before their second attempt, measured with `--expose-gc` as the growth
 * of `heapUsed` between two full collections, divided by the number of calls. The baseline is
 * the least a waiting call can hold: a bare promise resolved by a `setTimeout`.
 *
 * One contender per process, so that no library's heap (or code) is counted for another:
 *   node --expose-gc --import tsx bench/memory.ts <contender> [calls]
 * prints one JSON line: { name, bytesPerCall }. bench/main.ts runs every contender.
 */
import asyncRetry from 'async-retry';
import { ConstantBackoff, handleAll, retry as cockatielRetry } from 'cockatiel';
import { backOff } from 'exponential-backoff';
import { pathToFileURL } from 'node:url';
import pRetry from 'p-retry';
import { type Library, loadLibrary } from './library.js';

/** How long every contender sleeps after the first failure; far longer than a measurement. */
const SLEEP_MS = 60_000;

/** Contender name → a function that starts one call of `op` through it. */
export const sleepers: Record<string, (lib: Library, op: () => Promise<never>) => () => Promise<unknown>> = {
  'baseline: setTimeout + promise': () => () => new Promise((resolve) => setTimeout(resolve, SLEEP_MS)),
  'tenacious retry(), frozen options': (lib, op) => {
    const options = Object.freeze({
      backoff: Object.freeze({ initialDelayMs: SLEEP_MS, maxDelayMs: SLEEP_MS, jitter: 'none' as const }),
      deadlineMs: 10 * SLEEP_MS,
    });
    return () => lib.retry(op, options);
  },
  // As users write it: a fresh options literal per call, read and validated on every call.
  'tenacious retry(), options literal per call': (lib, op) => () =>
    lib.retry(op, { backoff: { initialDelayMs: SLEEP_MS, maxDelayMs: SLEEP_MS, jitter: 'none' }, deadlineMs: 10 * SLEEP_MS }),
  'cockatiel 3.2': (_lib, op) => {
    const policy = cockatielRetry(handleAll, { maxAttempts: 1, backoff: new ConstantBackoff(SLEEP_MS) });
    return () => policy.execute(op);
  },
  'p-retry 7.1': (_lib, op) => () => pRetry(op, { retries: 1, minTimeout: SLEEP_MS }),
  'exponential-backoff 3.1': (_lib, op) => () => backOff(op, { numOfAttempts: 2, startingDelay: SLEEP_MS }),
  'async-retry 1.3': (_lib, op) => () => asyncRetry(op, { retries: 1, minTimeout: SLEEP_MS, randomize: false }),
};

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run node with --expose-gc');
  // Twice: the first pass can leave garbage that only the second one finds (weak callbacks).
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(name: string, calls: number): Promise<void> {
  const make = sleepers[name];
  if (make === undefined) throw new Error(`unknown contender ${JSON.stringify(name)}; known: ${Object.keys(sleepers).join(', ')}`);
  const failure = new Error('transient');
  let attempts = 0;
  const op = (): Promise<never> => {
    attempts++;
    return Promise.reject(failure);
  };
  const call = make(await loadLibrary(), op);
  // A first round warms up the code (its compiled code would otherwise count as growth).
  for (let i = 0; i < 1000; i++) call();
  await turns(3);

  const held: Array<Promise<unknown>> = new Array(calls).fill(undefined);
  const startAttempts = attempts;
  const before = heapUsed();
  for (let i = 0; i < calls; i++) held[i] = call();
  await turns(3);
  const after = heapUsed();

  const failedOnce = attempts - startAttempts;
  const expected = name.startsWith('baseline') ? 0 : calls;
  if (failedOnce !== expected) throw new Error(`${name}: ${failedOnce} attempts ran, expected ${expected} (one each)`);
  process.stdout.write(`${JSON.stringify({ name, bytesPerCall: (after - before) / held.length })}\n`);
  // The sleepers would keep the process alive for a minute.
  process.exit(0);
}

/** Lets the event loop turn a few times, so every call has failed and gone to sleep. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

// Run only when started directly (bench/main.ts imports the list of contenders).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(process.argv[2] ?? '', Number(process.argv[3] ?? 50_000));
}
