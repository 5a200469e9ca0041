// tenacious/redis against a real redis-server (test/redis/server.ts), with each client it
// supports: a pause shared between gates through one key, extended atomically, kept on Redis's
// clock, read again on reconnection, and a gate that reports garbage under the key or on the
// channel, holding no longer than maxHoldMs. Failures of Redis itself: failures.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RetryClock, retry, systemClock } from '../../src/index.js';
import { type RedisGate, type RedisGateOptions, createRedisGate } from '../../src/redis/index.js';
import { CLIENTS, type ClientName, type TestClient, until } from './clients.js';
import { type RedisServer, startRedis } from './server.js';

let redis: RedisServer;
const open: Array<{ close(): Promise<void> }> = [];
let keys = 0;
/** A key no other test uses. */
const freshKey = (): string => `tenacious:test:${process.pid}:${++keys}`;

beforeAll(async () => {
  redis = await startRedis();
}, 15_000);
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function client(name: ClientName): Promise<TestClient> {
  const made = await CLIENTS[name](redis.url);
  open.push(made);
  return made;
}

async function gate(options: RedisGateOptions): Promise<RedisGate> {
  const made = await createRedisGate(options);
  open.push(made);
  return made;
}

/** A clock `minutes` ahead of this process's: a host whose time is off. */
const offClock = (minutes: number): RetryClock => ({ ...systemClock, now: () => systemClock.now() + minutes * 60_000 });

describe.each(Object.keys(CLIENTS) as ClientName[])('createRedisGate with %s', (name) => {
  it('shares a hold with another process’s gate: the pause reaches it by pub/sub and sits in the key, on Redis’s clock', async () => {
    const key = freshKey();
    const [a, b, observer] = [await client(name), await client(name), await client(name)];
    const gateA = await gate({ client: a.client, key, spread: false });
    const gateB = await gate({ client: b.client, key, spread: false });
    expect([gateA.waitMs(), gateB.waitMs(), gateA.maxHoldMs]).toEqual([0, 0, 64_000]);
    const before = Number(((await observer.command(['TIME'])) as string[])[0]) * 1000;
    gateA.hold(2000);
    expect(gateA.waitMs()).toBeGreaterThan(1990); // at once, before any round trip
    await until(() => gateB.waitMs() > 0, 2000, 'the pause reaching gate B');
    expect(gateB.waitMs()).toBeGreaterThan(1800);
    expect(gateB.waitMs()).toBeLessThanOrEqual(2001);
    const end = Number(await observer.command(['GET', key]));
    expect(end - before).toBeGreaterThan(1000); // ms since 1970 on Redis's clock, about 2 s ahead
    expect(end - before).toBeLessThan(4000);
    expect(Number(await observer.command(['PTTL', key]))).toBeLessThanOrEqual(2000);
  });

  it('reads no Redis on the success path: waitMs() is the local gate’s', async () => {
    const key = freshKey();
    const a = await client(name);
    const gateA = await gate({ client: a.client, key });
    const evals = vi.spyOn(a.client as { eval: () => unknown }, 'eval');
    for (let i = 0; i < 1000; i++) expect(gateA.waitMs(5000)).toBe(0);
    expect(evals).not.toHaveBeenCalled();
    const calls = await Promise.all(Array.from({ length: 20 }, (_, i) => retry(async () => i, { gate: gateA })));
    expect(calls).toHaveLength(20);
    expect(evals).not.toHaveBeenCalled();
  });

  it('starts paused when created during a pause, and a shorter hint does not shorten it', async () => {
    const key = freshKey();
    const [a, b] = [await client(name), await client(name)];
    const gateA = await gate({ client: a.client, key, spread: false });
    gateA.hold(3000);
    await until(async () => (await a.command(['GET', key])) !== null, 2000, 'the key being written');
    const gateB = await gate({ client: b.client, key, spread: false });
    expect(gateB.waitMs()).toBeGreaterThan(2500);
    const end = await a.command(['GET', key]);
    gateB.hold(500);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await a.command(['GET', key])).toBe(end);
    expect(gateA.waitMs()).toBeGreaterThan(2500);
  });

  it('extends one pause atomically: twenty gates holding at once leave the longest in the key', async () => {
    const key = freshKey();
    const observer = await client(name);
    const gates = await Promise.all(
      Array.from({ length: 20 }, async () => gate({ client: (await client(name)).client, key, spread: false })),
    );
    const time = (await observer.command(['TIME'])) as string[];
    const redisNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    for (const [i, g] of gates.entries()) g.hold(1000 + 100 * i); // the last asks for 2,900 ms
    await until(() => gates.every((g) => g.waitMs() > 2700), 2000, 'every gate holding the longest pause');
    const end = Number(await observer.command(['GET', key]));
    expect(end - redisNow).toBeGreaterThanOrEqual(2880); // the end it meant, mapped through a clock offset good to a millisecond or two
    expect(end - redisNow).toBeLessThan(3100);
  });

  it('agrees on when a pause ends with a process whose clock is minutes off', async () => {
    const key = freshKey();
    const [a, b] = [await client(name), await client(name)];
    const ahead = await gate({ client: a.client, key, spread: false, clock: offClock(7) });
    const behind = await gate({ client: b.client, key, spread: false, clock: offClock(-5) });
    ahead.hold(2000);
    await until(() => behind.waitMs() > 0, 2000, 'the pause reaching the gate whose clock is behind');
    expect(Math.abs(behind.waitMs() - ahead.waitMs())).toBeLessThan(50);
    behind.hold(3000);
    await until(() => ahead.waitMs() > 2500, 2000, 'the longer pause reaching the gate whose clock is ahead');
    expect(Math.abs(behind.waitMs() - ahead.waitMs())).toBeLessThan(50);
  });

  it('reads the key again when its subscription reconnects: a pause it missed is held', async () => {
    const key = freshKey();
    const [a, admin] = [await client(name), await client(name)];
    const gateA = await gate({ client: a.client, key, spread: false });
    const time = (await admin.command(['TIME'])) as string[];
    const end = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) + 3000;
    await admin.command(['SET', key, String(end), 'PX', '3000']); // written, not announced
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gateA.waitMs()).toBe(0);
    await admin.command(['CLIENT', 'KILL', 'TYPE', 'pubsub']);
    await until(() => gateA.waitMs() > 0, 3000, 'the gate reading the key on reconnection');
    expect(gateA.waitMs()).toBeGreaterThan(2000);
    expect(gateA.waitMs()).toBeLessThanOrEqual(3000);
  });

  it('reports garbage under the key, ignores it, and replaces it with the next pause', async () => {
    const key = freshKey();
    const [a, b] = [await client(name), await client(name)];
    await a.command(['SET', key, 'banana']);
    const errors: unknown[] = [];
    const gateA = await gate({ client: a.client, key, spread: false, onError: (e) => errors.push(e) });
    expect(gateA.waitMs()).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(String(errors[0])).toBe(
      'TypeError: createRedisGate: the pause read from Redis must be the moment it ends, in ms since 1970, got "banana"',
    );
    const gateB = await gate({ client: b.client, key, spread: false });
    gateB.hold(1500);
    await until(() => gateA.waitMs() > 0, 2000, 'the next pause replacing the garbage');
    expect(Number(await a.command(['GET', key]))).toBeGreaterThan(1e12);
  });

  it('reads a key of another type as garbage, and a pause past maxHoldMs as maxHoldMs, reported', async () => {
    const key = freshKey();
    const a = await client(name);
    await a.command(['LPUSH', key, 'x']);
    const errors: unknown[] = [];
    const gateA = await gate({ client: a.client, key, maxHoldMs: 5000, spread: false, onError: (e) => errors.push(e) });
    expect(gateA.waitMs()).toBe(0);
    expect(String(errors[0])).toMatch(/the pause read from Redis must be the moment it ends, in ms since 1970, got "a list"$/);
    const time = (await a.command(['TIME'])) as string[];
    const tenDays = Number(time[0]) * 1000 + 10 * 86_400_000;
    await a.command(['PUBLISH', key, `${Number(time[0]) * 1000} ${tenDays}`]);
    await until(() => gateA.waitMs() > 0, 2000, 'the absurd pause arriving');
    expect(gateA.waitMs()).toBeLessThanOrEqual(5000);
    expect(gateA.waitMs()).toBeGreaterThan(4000);
    expect(errors[1]).toBeInstanceOf(RangeError);
    expect(String(errors[1])).toMatch(/must end within maxHoldMs \(5000 ms\); it was cut to it, got "86\d{7} ms"$/);
  });

  it('ignores and reports a message on the channel that is not a pause', async () => {
    const key = freshKey();
    const a = await client(name);
    const errors: unknown[] = [];
    const gateA = await gate({ client: a.client, key, onError: (e) => errors.push(e) });
    for (const text of ['soon', '1 2 3', '-5 10', '1700000000000 NaN']) await a.command(['PUBLISH', key, text]);
    await until(() => errors.length === 4, 2000, 'four reports');
    expect(gateA.waitMs()).toBe(0);
    expect(errors.map((e) => (e as Error).message.replace(/^createRedisGate: /, ''))).toEqual([
      'a message must be "<Redis time in ms> <end in ms>", got "soon"',
      'a message must be "<Redis time in ms> <end in ms>", got "1 2 3"',
      'a message must be "<Redis time in ms> <end in ms>", got "-5 10"',
      'the pause read from Redis must be the moment it ends, in ms since 1970, got "NaN"',
    ]);
  });

  it('close() stops listening, leaves the client open, and can be called again', async () => {
    const key = freshKey();
    const [a, b] = [await client(name), await client(name)];
    const gateA = await gate({ client: a.client, key, spread: false });
    const gateB = await gate({ client: b.client, key, spread: false });
    await gateB.close();
    await gateB.close();
    gateA.hold(2000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateB.waitMs()).toBe(0);
    expect(await b.command(['PING'])).toBe('PONG');
    gateB.hold(1000); // still the process's own gate
    expect(gateB.waitMs()).toBeGreaterThan(990);
    expect(Number(await b.command(['PUBSUB', 'NUMSUB', key].slice(0, 3)).then((r) => (r as unknown[])[1]))).toBe(1);
  });

  it('survives an onError that throws', async () => {
    const key = freshKey();
    const a = await client(name);
    await a.command(['SET', key, 'garbage']);
    const gateA = await gate({
      client: a.client,
      key,
      onError: () => {
        throw new Error('logger down');
      },
    });
    expect(gateA.waitMs()).toBe(0);
  });
});
