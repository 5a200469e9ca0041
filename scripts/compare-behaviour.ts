// `node --import tsx scripts/compare-behaviour.ts`: how tenacious and other retry libraries keep
// (or do not keep) a caller's time limits, measured in real time. Three situations:
//
// - a 200 ms overall limit while an attempt hangs for 1 s;
// - the caller aborts at 100 ms while an attempt runs for 1 s (the attempt ignores the signal);
// - the caller aborts at 100 ms during a 1 s backoff sleep.
//
// For each, when the call settled and how many attempts were started. Prints a markdown table.
// Takes about 15 s. Each library is given its own closest option; "—" means it has none.
import asyncRetry from 'async-retry';
import { ConstantBackoff, TimeoutStrategy, retry as cockatielRetry, handleAll, timeout, wrap } from 'cockatiel';
import pRetry from 'p-retry';
import { retry } from '../src/index.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const busy = (): Error => Object.assign(new Error('busy'), { status: 503 });

/** An operation that fails after `ms`, counting its calls. */
function failingAfter(ms: number): { op: () => Promise<never>; calls: () => number } {
  let calls = 0;
  return {
    op: async () => {
      calls += 1;
      await sleep(ms);
      throw busy();
    },
    calls: () => calls,
  };
}

/** Aborts a fresh controller after `ms`. */
function abortAfter(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('caller aborted')), ms);
  return controller.signal;
}

type Run = (op: () => Promise<never>) => Promise<unknown>;

interface Situation {
  title: string;
  /** How long each attempt takes before it fails. */
  attemptMs: number;
  runs: Record<string, Run | undefined>;
}

const SITUATIONS: Situation[] = [
  {
    title: 'limit 200 ms, attempt hangs 1 s',
    attemptMs: 1000,
    runs: {
      tenacious: (op) => retry(op, { deadlineMs: 200, backoff: { initialDelayMs: 10 } }),
      'p-retry': (op) => pRetry(op, { maxRetryTime: 200, minTimeout: 10 }),
      cockatiel: (op) =>
        wrap(
          timeout(200, TimeoutStrategy.Aggressive),
          cockatielRetry(handleAll, { maxAttempts: 10, backoff: new ConstantBackoff(10) }),
        ).execute(op),
      'exponential-backoff': undefined,
      'async-retry': (op) => asyncRetry(op, { maxRetryTime: 200, minTimeout: 10 }),
    },
  },
  {
    title: 'abort at 100 ms during a 1 s attempt',
    attemptMs: 1000,
    runs: {
      tenacious: (op) => retry(op, { signal: abortAfter(100) }),
      'p-retry': (op) => pRetry(op, { signal: abortAfter(100) }),
      cockatiel: (op) => cockatielRetry(handleAll, { maxAttempts: 10, backoff: new ConstantBackoff(10) }).execute(op, abortAfter(100)),
      'exponential-backoff': undefined,
      'async-retry': undefined,
    },
  },
  {
    title: 'abort at 100 ms during a 1 s sleep',
    attemptMs: 0,
    runs: {
      tenacious: (op) => retry(op, { signal: abortAfter(100), backoff: { initialDelayMs: 1000, jitter: 'none' } }),
      'p-retry': (op) => pRetry(op, { signal: abortAfter(100), minTimeout: 1000 }),
      cockatiel: (op) => cockatielRetry(handleAll, { maxAttempts: 10, backoff: new ConstantBackoff(1000) }).execute(op, abortAfter(100)),
      'exponential-backoff': undefined,
      'async-retry': undefined,
    },
  },
];

async function measure(run: Run, attemptMs: number): Promise<string> {
  const { op, calls } = failingAfter(attemptMs);
  const started = performance.now();
  await run(op).catch(() => undefined);
  const settledMs = Math.round(performance.now() - started);
  const attempts = calls();
  // Let abandoned attempts finish before the next measurement starts.
  await sleep(attemptMs + 50);
  return `${settledMs} ms, ${attempts} attempt${attempts === 1 ? '' : 's'}`;
}

const libraries = Object.keys(SITUATIONS[0]?.runs ?? {});
console.log(`| situation | ${libraries.join(' | ')} |`);
console.log(`| --- |${libraries.map(() => ' --- |').join('')}`);
for (const situation of SITUATIONS) {
  const cells: string[] = [];
  for (const library of libraries) {
    const run = situation.runs[library];
    cells.push(run === undefined ? '—' : await measure(run, situation.attemptMs));
  }
  console.log(`| ${situation.title} | ${cells.join(' | ')} |`);
}
