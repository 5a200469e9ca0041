/**
 * The success path through a gate shared by Redis (issue 36: within 1.1× of the in-process gate).
 * `retry(fn, { gate })` with a gate from `createRedisGate()` and no pause in force, against the
 * same call with a gate from `createRetryAfterGate()`; each measured as speed.ts measures a
 * contender (mitata, its time per call over a bare `await fn()` measured around it), each in
 * processes of its own so that neither gate's shape makes the engine's code polymorphic for the
 * other. The Redis gate's process starts a real redis-server (test/redis/server.ts) and connects
 * node-redis to it: the gate listens on a second connection, and its `waitMs()` reads the local
 * copy, so nothing should reach Redis while the calls run.
 *
 * Run by bench/main.ts; alone:
 *   node --expose-gc --import tsx bench/redis-gate.ts <local|redis> [rounds]
 * prints one JSON line, a `SpeedRun`.
 */
import { pathToFileURL } from 'node:url';
import { measure } from 'mitata';
import { createClient } from 'redis';
import { startRedis } from '../test/redis/server.js';
import { bundleAndImport } from './library.js';
import type { SpeedRun } from './speed.js';

/** The two gates compared, by the name the tables print. */
export const GATES = {
  local: 'tenacious retry(fn, { gate: createRetryAfterGate() })',
  redis: 'tenacious retry(fn, { gate: await createRedisGate({ client, key }) }) (no pause)',
} as const;

type Library = typeof import('../src/index.js') & typeof import('../src/redis/index.js');

/** The main entry and tenacious/redis bundled by esbuild, as users get them (see bench/library.ts). */
function loadLibrary(): Promise<Library> {
  return bundleAndImport<Library>(['src/index.ts', 'src/redis/index.ts'], 'redis');
}

/** Measures the call through gate `kind`, `rounds` times, in this process. */
export async function measureGate(kind: keyof typeof GATES, rounds: number): Promise<SpeedRun> {
  const lib = await loadLibrary();
  const server = kind === 'redis' ? await startRedis() : undefined;
  const client = server === undefined ? undefined : await createClient({ url: server.url }).connect();
  try {
    const shared = client === undefined ? undefined : await lib.createRedisGate({ client, key: 'tenacious:bench:gate' });
    const gate = shared ?? lib.createRetryAfterGate();
    const options = Object.freeze({ gate });
    const op = async () => 42;
    const call = async () => void (await lib.retry(op, options));
    const bare = async () => void (await op());
    const sample = async (f: () => Promise<void>) => (await measure(f, { min_cpu_time: 100e6 } as Parameters<typeof measure>[1])).p50;
    const name = GATES[kind];
    const run: SpeedRun = { ratios: { [name]: [] }, nanoseconds: { [name]: [] } };
    let before = await sample(bare);
    for (let round = 0; round < rounds; round++) {
      const ns = await sample(call);
      const after = await sample(bare);
      run.nanoseconds[name]?.push(ns);
      run.ratios[name]?.push(ns / ((before + after) / 2));
      before = after;
    }
    await shared?.close();
    return run;
  } finally {
    client?.destroy();
    await server?.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const kind = process.argv[2];
  if (kind !== 'local' && kind !== 'redis') throw new RangeError(`the gate must be local or redis, got ${JSON.stringify(kind)}`);
  const run = await measureGate(kind, Number(process.argv[3] ?? 3));
  process.stdout.write(`${JSON.stringify(run)}\n`);
}
