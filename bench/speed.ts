/**
 * The success path: a contender calls an operation that resolves at once, inside an async
 * function that awaits it, as application code would (`await retry(fn)` against a bare
 * `await fn()`). mitata measures it for ~100 ms per round, with the bare await measured just
 * before and just after, and its median time per call is divided by the mean of those two, so
 * that load from other processes, which comes and goes over seconds, skews one ratio a little
 * rather than a whole round.
 *
 * Each contender runs in processes of its own: calls of one shape make the shared engine's code
 * polymorphic for the shapes measured after them, so in one process the order of the contenders
 * would decide their ratios (withRetry(fn) measured 3.12× bare after the telemetry and preset
 * contenders, 2.85× when measured first; retry(fn) had gained the same way from going first).
 *
 * Run by bench/main.ts; alone:
 *   node --expose-gc --import tsx bench/speed.ts <contender index> [rounds]
 * prints one JSON line, a `SpeedRun` of that contender.
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

/** Measures contender `index` (of `contenders()`) `rounds` times, in this process. */
export async function measureSpeed(index: number, rounds: number): Promise<SpeedRun> {
  const op = async () => 42;
  const list = contenders(await loadLibrary());
  const contender = list[index];
  if (contender === undefined) throw new RangeError(`contender index must be 0 to ${list.length - 1}, got ${index}`);
  const wrapped = contender.wrap(op);
  const call = async () => void (await wrapped());
  const bare = async () => void (await op());
  const sample = async (f: () => Promise<void>) =>
    // The median sample shrugs off GC pauses and preemption.
    (await measure(f, { min_cpu_time: 100e6 } as Parameters<typeof measure>[1])).p50;
  const run: SpeedRun = { ratios: { [contender.name]: [] }, nanoseconds: { [contender.name]: [] } };
  let before = await sample(bare);
  for (let round = 0; round < rounds; round++) {
    const ns = await sample(call);
    const after = await sample(bare);
    run.nanoseconds[contender.name]?.push(ns);
    run.ratios[contender.name]?.push(ns / ((before + after) / 2));
    before = after;
  }
  return run;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const run = await measureSpeed(Number(process.argv[2]), Number(process.argv[3] ?? 3));
  process.stdout.write(`${JSON.stringify(run)}\n`);
}
