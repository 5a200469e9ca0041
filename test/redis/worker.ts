// One process of the fleet in test/redis/fleet.test.ts: its own Redis client and gate, run as
//   node --import tsx test/redis/worker.ts <redis url> <key> <node-redis|ioredis> <clock offset ms>
// It prints one JSON line when its gate is ready, then answers each line of stdin,
// `{"url": …, "calls": n}`, by making n retryFetch calls through the gate and printing their
// statuses and when each began (Date.now()); an empty line ends it.
import { createInterface } from 'node:readline';
import { retryFetch } from '../../src/fetch/index.js';
import { type RetryClock, systemClock } from '../../src/index.js';
import { createRedisGate } from '../../src/redis/index.js';
import { CLIENTS, type ClientName } from './clients.js';

const [url, key, name, offset] = process.argv.slice(2) as [string, string, ClientName, string];
// A host whose clock is `offset` ms off: the gate's pauses are timed on it.
const clock: RetryClock = { ...systemClock, now: () => Date.now() + Number(offset) };
const errors: string[] = [];
const connection = await CLIENTS[name](url);
const gate = await createRedisGate({ client: connection.client, key, spread: false, clock, onError: (e) => errors.push(String(e)) });
const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
say({ ready: true, pid: process.pid });

for await (const line of createInterface({ input: process.stdin })) {
  if (line === '') break;
  const { url: target, calls } = JSON.parse(line) as { url: string; calls: number };
  const began = Date.now();
  const results = await Promise.all(
    Array.from({ length: calls }, async () => {
      const response = await retryFetch(target, { headers: { 'x-worker': String(process.pid) } }, { gate, deadlineMs: 20_000 });
      await response.text();
      return response.status;
    }),
  );
  say({ results, began, errors });
}
await gate.close();
await connection.close();
