// When Redis fails: dead at creation, slow, SIGKILLed mid-run and restarted on the same port. The
// gate must never reject a call, never make one wait on Redis, never leave a rejection unhandled
// (test/setup/fail-on-unhandled.ts fails the test that does), pause its own process on what a
// server said, report to onError, and share again once Redis is back, without replaying a pause
// held while it was down.
import FakeTimers from '@sinonjs/fake-timers';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RetryClock, retry } from '../../src/index.js';
import { HOLD_SCRIPT } from '../../src/redis/scripts.js';
import { REDIS_ANSWER_BUDGET_MS, type RedisGate, createRedisGate } from '../../src/redis/index.js';
import { CLIENTS, type ClientName, type TestClient, until } from './clients.js';
import { type RedisServer, startRedis } from './server.js';

let redis: RedisServer;
const open: Array<{ close(): Promise<void> }> = [];
beforeEach(async () => {
  redis = await startRedis();
}, 15_000);
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
  await redis.stop();
});

/** A client of `name` that is not waited for: Redis may be dead. */
function lazyClient(name: ClientName): { client: object; ready(): boolean } {
  if (name === 'node-redis') {
    const client = createClient({ url: redis.url, socket: { reconnectStrategy: () => 50 } });
    client.on('error', () => {});
    client.connect().catch(() => {});
    open.push({ close: async () => void client.destroy() });
    return { client, ready: () => client.isReady };
  }
  const made = new Redis(redis.url, { retryStrategy: () => 50 });
  made.on('error', () => {});
  open.push({ close: async () => made.disconnect() });
  return { client: made, ready: () => made.status === 'ready' };
}

async function client(name: ClientName): Promise<TestClient> {
  const made = await CLIENTS[name](redis.url);
  open.push(made);
  return made;
}

function track(gate: RedisGate): RedisGate {
  open.push(gate);
  return gate;
}

/** A 429 with Retry-After: `seconds` on the first attempt, then `value`. */
function limitedOnce<T>(value: T, seconds: number): () => Promise<T> {
  let attempts = 0;
  return async () => {
    if (++attempts === 1) throw Object.assign(new Error('429'), { status: 429, headers: { 'retry-after': String(seconds) } });
    return value;
  };
}

/** The key's subscribers, as Redis counts them. */
async function subscribers(admin: TestClient, key: string): Promise<number> {
  const reply = (await admin.command(['PUBSUB', 'NUMSUB', key])) as unknown[];
  return Number(reply[1]);
}

describe.each(Object.keys(CLIENTS) as ClientName[])('a Redis gate on %s when Redis fails', (name) => {
  it('resolves local-only within the answer budget on its clock when Redis is dead, and starts sharing once it answers', async () => {
    await redis.kill();
    const fake = FakeTimers.createClock(0);
    const clock: RetryClock = {
      now: () => fake.now,
      setTimeout: (f, ms) => fake.setTimeout(f, ms),
      clearTimeout: (h) => fake.clearTimeout(h as never),
    };
    const errors: unknown[] = [];
    const { client: dead } = lazyClient(name);
    let created: RedisGate | undefined;
    const creating = createRedisGate({ client: dead, key: 'k', spread: false, clock, onError: (e) => errors.push(e) }).then((g) => {
      created = track(g);
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(created).toBeUndefined(); // waiting for Redis, on the gate's clock
    fake.tick(REDIS_ANSWER_BUDGET_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(created).toBeUndefined();
    fake.tick(1);
    await creating;
    const gate = created as RedisGate;
    expect(errors.map(String)).toContain(
      'Error: createRedisGate: Redis did not answer within 1000 ms; the gate pauses this process alone until it does',
    );
    gate.hold(2000); // a server's hint still pauses this process
    expect(gate.waitMs()).toBe(2000);

    await redis.restart();
    const admin = await client(name);
    await until(async () => (await subscribers(admin, 'k')) === 1, 5000, 'the gate subscribing once Redis is back');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await admin.command(['GET', 'k'])).toBeNull(); // the pause held while Redis was dead stays local
    const other = track(await createRedisGate({ client: admin.client, key: 'k', spread: false }));
    gate.hold(1500);
    await until(() => other.waitMs() > 1000, 3000, 'the pause reaching the other gate');
  });

  it('goes on through a SIGKILL: calls pause on their own hints, none waits on Redis, and sharing resumes after a restart', async () => {
    const key = 'fleet';
    const [a, b] = [lazyClient(name), lazyClient(name)];
    await until(() => a.ready() && b.ready(), 3000, 'the clients connecting');
    const errors: unknown[] = [];
    const gateA = track(await createRedisGate({ client: a.client, key, spread: false, onError: (e) => errors.push(e) }));
    const gateB = track(await createRedisGate({ client: b.client, key, spread: false }));
    gateA.hold(300);
    await until(() => gateB.waitMs() > 0, 2000, 'sharing before the kill');
    await until(() => gateB.waitMs() === 0, 2000, 'that pause ending');

    await redis.kill();
    await until(() => !a.ready() && !b.ready(), 3000, 'the clients noticing');
    const started = performance.now();
    const [held, free] = await Promise.all([
      retry(limitedOnce('after the pause', 1), { gate: gateA, backoff: { initialDelayMs: 1 } }),
      retry(async () => 'at once', { gate: gateB }),
    ]);
    expect(held).toBe('after the pause');
    expect(free).toBe('at once');
    expect(performance.now() - started).toBeGreaterThanOrEqual(990); // Retry-After: 1, held here
    expect(gateB.waitMs()).toBe(0); // nothing shared while Redis is dead…
    expect(errors.length).toBeGreaterThan(0); // …and the lost connection reported

    await redis.restart();
    const admin = await client(name);
    await until(async () => (await subscribers(admin, key)) === 2 && a.ready() && b.ready(), 5000, 'both gates back');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await admin.command(['GET', key])).toBeNull(); // the pause of the dead time was not replayed
    gateA.hold(1500);
    await until(() => gateB.waitMs() > 1000, 3000, 'sharing after the restart');
  });

  it('resolves within the answer budget when Redis is slow to answer, and shares once it does', async () => {
    const [admin, slow] = [await client(name), await client(name)];
    await admin.command(['CLIENT', 'PAUSE', '1500', 'ALL']);
    const errors: unknown[] = [];
    const started = performance.now();
    const gate = track(await createRedisGate({ client: slow.client, key: 'slow', spread: false, onError: (e) => errors.push(e) }));
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(REDIS_ANSWER_BUDGET_MS - 5);
    expect(took).toBeLessThan(1400);
    expect(errors.map(String)).toEqual([
      'Error: createRedisGate: Redis did not answer within 1000 ms; the gate pauses this process alone until it does',
    ]);
    gate.hold(2500); // Redis still paused: held here at once, shared once Redis's clock is known
    expect(gate.waitMs()).toBeGreaterThan(2490);
    const other = track(await createRedisGate({ client: admin.client, key: 'slow', spread: false }));
    await until(() => other.waitMs() > 1000, 3000, `the pause reaching the other gate (${errors.map(String).join('; ')})`);
    expect(Math.abs(other.waitMs() - gate.waitMs())).toBeLessThan(50); // for what is left of it, not afresh
  });
});

describe('the hold script', () => {
  it('adds only what is left of a pause a client sent late (offline queue), and nothing for one already over', async () => {
    const admin = await client('node-redis');
    const run = (args: string[]) =>
      (admin.client as ReturnType<typeof createClient>).eval(HOLD_SCRIPT, { keys: ['late'], arguments: args });
    const [now] = (await run(['1000', '1', '64000', 'late'])) as number[];
    expect(await admin.command(['GET', 'late'])).toBeNull();
    const [, end] = (await run(['5000', String((now as number) + 2000), '64000', 'late'])) as number[];
    expect((end as number) - (now as number)).toBeGreaterThanOrEqual(1990);
    expect((end as number) - (now as number)).toBeLessThanOrEqual(2000);
    expect(Number(await admin.command(['PTTL', 'late']))).toBeLessThanOrEqual(2000);
  });

  it('replaces a current end further off than maxHoldMs, and keeps a longer valid one', async () => {
    const admin = await client('node-redis');
    const run = (args: string[]) => (admin.client as ReturnType<typeof createClient>).eval(HOLD_SCRIPT, { keys: ['cap'], arguments: args });
    const [now] = (await run(['1', '1', '64000', 'cap'])) as number[];
    await admin.command(['SET', 'cap', String((now as number) + 86_400_000)]);
    const [, replaced] = (await run(['1000', String((now as number) + 10_000), '64000', 'cap'])) as number[];
    expect((replaced as number) - (now as number)).toBeLessThan(2000);
    const [, kept] = (await run(['500', String((now as number) + 10_000), '64000', 'cap'])) as number[];
    expect(kept).toBe(replaced);
  });
});
