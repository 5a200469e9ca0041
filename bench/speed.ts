/**
 * The success path: every contender calls an operation that resolves at once, inside an
 * async function that awaits it, as application code would (`await retry(fn)` against a bare
 * `await fn()`). mitata measures each for ~100 ms per round; the bare await is measured again
 * between any two contenders, and each contender's median time per call is divided by the mean
 * of the bare awaits just before and just after it, so that load from other processes, which
 * comes and goes over seconds, skews one ratio a little rather than a whole round.
 *
 * Run by bench/main.ts, once per process; alone:
 *   node --expose-gc --import tsx bench/speed.ts [rounds]
 * prints one JSON line, a `SpeedRun`.
 */
import { pathToFileURL } from 'node:url';
import { measure } from 'mitata';
import { contenders } from './contenders.js';
import { loadLibrary } from './library.js';

/** One process's measurements: per contender, one entry per round. */
export interface SpeedRun {
  /** Median time per call divided by the bare await's (measured around it). */
  readonly ratios: Record<string, number[]>;
  /** Median nanoseconds per call. */
  readonly nanoseconds: Record<string, number[]>;
}

/** Measures every contender `rounds` times. */
export async function measureSpeed(rounds: number): Promise<SpeedRun> {
  const op = async () => 42;
  const calls = contenders(await loadLibrary()).map(({ name, wrap }) => {
    const call = wrap(op);
    return { name, call: async () => void (await call()) };
  });
  const bare = calls[0]?.call as () => Promise<void>;
  const run: SpeedRun = { ratios: {}, nanoseconds: {} };
  for (const { name } of calls) {
    run.ratios[name] = [];
    run.nanoseconds[name] = [];
  }
  const sample = async (call: () => Promise<void>) =>
    // The median sample shrugs off GC pauses and preemption.
    (await measure(call, { min_cpu_time: 100e6 } as Parameters<typeof measure>[1])).p50;
  for (let round = 0; round < rounds; round++) {
    let before = await sample(bare);
    for (const { name, call } of calls) {
      const ns = await sample(call);
      const after = await sample(bare);
      run.nanoseconds[name]?.push(ns);
      run.ratios[name]?.push(ns / ((before + after) / 2));
      before = after;
    }
  }
  return run;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await measureSpeed(Number(process.argv[2] ?? 3)))}\n`);
}
