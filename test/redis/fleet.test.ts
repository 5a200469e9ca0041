// Several real Node processes (test/redis/worker.ts), each with its own Redis client and gate, two
// of them on clocks minutes off, against one real node:http server that answers its first request
// `429 Retry-After: 2`: once one process has heard it, the others send nothing until the pause
// ends, their first attempts included, and every call succeeds after it. Real time: the pause is
// the server's 2 s; the assertions are on order and counts, with a few milliseconds' slack for
// mapping clocks through Redis.
import { type ChildProcess, spawn } from 'node:child_process';
import { type Server, createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientName } from './clients.js';
import { type RedisServer, startRedis } from './server.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** How far the mapped end of a pause may fall before the server's: Redis's clock read through loopback round trips. */
const SLACK_MS = 25;

interface Arrival {
  readonly at: number;
  readonly worker: string;
  readonly status: number;
}

/** A worker process and the JSON lines it prints, in order. */
interface Worker {
  readonly child: ChildProcess;
  next(): Promise<Record<string, unknown>>;
  send(line: string): void;
}

function startWorker(redisUrl: string, key: string, client: ClientName, offsetMs: number): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, redisUrl, key, client, String(offsetMs)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  return {
    child,
    async next() {
      const { value, done } = await lines.next();
      if (done) throw new Error(`worker ${child.pid} ended (exit ${child.exitCode})`);
      return JSON.parse(value) as Record<string, unknown>;
    },
    send: (line) => void child.stdin?.write(`${line}\n`),
  };
}

let redis: RedisServer;
let server: Server;
let target: string;
const arrivals: Arrival[] = [];
const workers: Worker[] = [];

beforeAll(async () => {
  redis = await startRedis();
  server = createServer((request, response) => {
    const status = arrivals.length === 0 ? 429 : 200;
    arrivals.push({ at: Date.now(), worker: String(request.headers['x-worker']), status });
    response.writeHead(status, status === 429 ? { 'retry-after': '2' } : {}).end(status === 429 ? 'slow down' : 'ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(server.address() as { port: number }).port}/items`;
}, 15_000);

afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await new Promise((resolve) => server?.close(resolve));
  await redis?.stop();
});

describe('a fleet of processes sharing one gate through Redis', () => {
  it('holds every process during one server’s pause, first attempts included, and all succeed after it', async () => {
    // Node-redis and ioredis side by side; two hosts' clocks minutes off (ahead and behind).
    const setups: Array<[ClientName, number]> = [
      ['node-redis', 0],
      ['ioredis', 7 * 60_000],
      ['node-redis', -5 * 60_000],
      ['ioredis', 0],
    ];
    workers.push(...setups.map(([client, offset]) => startWorker(redis.url, 'tenacious:gate:fleet-test', client, offset)));
    const ready = await Promise.all(workers.map((worker) => worker.next()));
    expect(ready.map((message) => message.ready)).toEqual([true, true, true, true]);

    const [first, ...others] = workers as [Worker, ...Worker[]];
    first.send(JSON.stringify({ url: target, calls: 1 }));
    const firstDone = first.next();
    while (arrivals.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const pauseFrom = (arrivals[0] as Arrival).at;
    // The others start their calls during the pause, once it has had time to reach them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const worker of others) worker.send(JSON.stringify({ url: target, calls: 3 }));
    const reports = [await firstDone, ...(await Promise.all(others.map((worker) => worker.next())))];

    expect(reports.map((report) => report.results)).toEqual([[200], [200, 200, 200], [200, 200, 200], [200, 200, 200]]);
    expect(reports.map((report) => report.errors)).toEqual([[], [], [], []]);
    // The others began while the pause was on, and no request reached the server before it ended.
    for (const report of reports.slice(1)) expect(report.began as number).toBeLessThan(pauseFrom + 1500);
    expect(arrivals.map((arrival) => arrival.status)).toEqual([429, ...Array(10).fill(200)]);
    expect(arrivals.slice(1).every((arrival) => arrival.at >= pauseFrom + 2000 - SLACK_MS)).toBe(true);
    // Each process sent exactly its calls' first attempts after the pause: none learned of it by failing.
    const perWorker = new Map<string, number>();
    for (const arrival of arrivals) perWorker.set(arrival.worker, (perWorker.get(arrival.worker) ?? 0) + 1);
    expect([...perWorker.values()].sort()).toEqual([2, 3, 3, 3]);
    for (const worker of workers) worker.send('');
  }, 30_000);
});
