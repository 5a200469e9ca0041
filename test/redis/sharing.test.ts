// How a gate shares its pauses (src/redis/sharing.ts), step by step on a virtual clock, over a
// scripted connection that answers each round trip when the test says: what is sent to Redis and
// when, how an answer or an announcement maps onto this process's clock, and what is no longer
// done once the gate is closed. The same paths against a real redis-server: redis-gate.test.ts,
// failures.test.ts.
import FakeTimers from '@sinonjs/fake-timers';
import { describe, expect, it } from 'vitest';
import { type RetryAfterGate, type RetryClock, createRetryAfterGate } from '../../src/index.js';
import type { RedisConnection, SubscriberEvents } from '../../src/redis/connection.js';
import { HOLD_SCRIPT, READ_SCRIPT } from '../../src/redis/scripts.js';
import { type Sharing, startSharing } from '../../src/redis/sharing.js';

/** Redis's time at the start of each test: its clock and the gate's (0) are far apart. */
const R = 1_700_000_000_000;
const KEY = 'tenacious:gate:test';

/** A round trip the gate began, answered when the test says. */
interface RoundTrip {
  readonly script: string;
  readonly key: string;
  readonly args: readonly string[];
  answer(reply: unknown): void;
  fail(error: unknown): void;
}

interface World {
  readonly fake: FakeTimers.Clock;
  readonly local: RetryAfterGate;
  readonly sharing: Sharing;
  readonly trips: RoundTrip[];
  readonly errors: unknown[];
  /** The subscribing connection's events, as the gate handed them over. */
  readonly events: SubscriberEvents;
  /** Whether the client says it is connected. */
  ready: boolean;
  /** How many times the gate dropped its subscribing connection. */
  readonly drops: () => number;
  /** Puts the first subscription in force (the gate then reads the key). */
  subscribe(): Promise<void>;
}

/** Lets the promise callbacks queued so far run (the clock is not installed: setImmediate is real). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function world(options: { run?: RedisConnection['run']; subscribe?: RedisConnection['subscribe'] } = {}): World {
  const fake = FakeTimers.createClock(0);
  const clock: RetryClock = {
    now: () => fake.now,
    setTimeout: (f, ms) => fake.setTimeout(f, ms),
    clearTimeout: (h) => fake.clearTimeout(h as never),
  };
  const local = createRetryAfterGate({ spread: false, clock });
  const trips: RoundTrip[] = [];
  const errors: unknown[] = [];
  let events: SubscriberEvents | undefined;
  let inForce: (() => void) | undefined;
  let drops = 0;
  const connection: RedisConnection = {
    run:
      options.run ??
      ((script, key, args) =>
        new Promise((answer, fail) => {
          trips.push({ script, key, args, answer, fail });
        })),
    ready: () => made.ready,
    subscribe:
      options.subscribe ??
      ((channel, given) => {
        expect(channel).toBe(KEY);
        events = given;
        return {
          subscribed: new Promise<void>((resolve) => {
            inForce = resolve;
          }),
          close: () => void drops++,
        };
      }),
  };
  const sharing = startSharing({ where: 'createRedisGate', connection, key: KEY, local, clock, report: (e) => errors.push(e) });
  const made: World = {
    fake,
    local,
    sharing,
    trips,
    errors,
    get events() {
      return events as SubscriberEvents;
    },
    ready: true,
    drops: () => drops,
    subscribe: async () => {
      inForce?.();
      await settle();
    },
  };
  return made;
}

/** A world whose first read was answered at 0 with Redis's time R: the offset is R, exactly. */
async function synced(): Promise<World> {
  const w = world();
  await w.subscribe();
  expect(w.trips.map((t) => [t.script, t.key, t.args])).toEqual([[READ_SCRIPT, KEY, []]]);
  w.trips[0]?.answer([R, '']);
  await w.sharing.started;
  return w;
}

/** The pause each hold script asked for, and the end it meant on Redis's clock. */
const holds = (w: World): string[][] => w.trips.filter((t) => t.script === HOLD_SCRIPT).map((t) => [t.args[0] ?? '', t.args[1] ?? '']);

describe('sharing a pause', () => {
  it('sends a hint to Redis as the end it meant on Redis’s clock, and no hint that ends no later than one it sent', async () => {
    const w = await synced();
    w.sharing.share(1000);
    expect(w.trips[1]?.args).toEqual(['1000', String(R + 1000), '64000', KEY]);
    w.sharing.share(1000); // the same end
    w.sharing.share(400);
    expect(holds(w)).toEqual([['1000', String(R + 1000)]]);
    w.fake.tick(100);
    w.sharing.share(1000); // ends 100 ms later
    expect(holds(w)).toEqual([
      ['1000', String(R + 1000)],
      ['1000', String(R + 1100)],
    ]);
    expect(w.errors).toEqual([]);
  });

  it('holds this process for the end in force that a hold script answers with', async () => {
    const w = await synced();
    w.fake.tick(100);
    w.sharing.share(1000);
    w.trips[1]?.answer([R + 100, R + 3100]); // another process's longer pause was in force
    await settle();
    expect(w.local.waitMs()).toBe(3000);
    expect(w.errors).toEqual([]);
  });

  it('maps an announced pause onto this clock through the offset, so time spent in delivery counts', async () => {
    const w = await synced();
    w.fake.tick(500);
    w.events.message(`${R} ${R + 2000}`); // announced 500 ms ago on Redis's clock
    expect(w.local.waitMs()).toBe(1500);
    w.sharing.share(1000); // ends before the announced pause: Redis has it already
    w.sharing.share(1500); // ends with it
    expect(holds(w)).toEqual([]);
    w.sharing.share(1501);
    expect(holds(w)).toEqual([['1501', String(R + 2001)]]);
  });

  it('holds an announced pause for its own length before any round trip has told Redis’s clock', async () => {
    const w = world();
    await w.subscribe(); // the first read is still unanswered
    w.fake.tick(7);
    w.events.message(`${R} ${R + 2000}`);
    expect(w.local.waitMs()).toBe(2000);
    expect(w.errors).toEqual([]);
  });

  it('neither holds nor counts as shared a pause that is over when it is announced: a 0 ms hint still goes out', async () => {
    const w = await synced();
    w.fake.tick(500);
    w.events.message(`${R + 500} ${R + 500}`);
    expect(w.local.waitMs()).toBe(0);
    w.sharing.share(0); // Retry-After: 0
    expect(holds(w)).toEqual([['0', String(R + 500)]]);
  });

  it('reads the key again once a minute at most while announcements come, to keep the offset fresh', async () => {
    const w = await synced();
    w.fake.tick(10);
    w.events.message(`${R} ${R + 100}`);
    w.fake.tick(59_990); // the offset is 60 s old: still fresh
    w.events.message(`${R} ${R + 100}`);
    expect(w.trips).toHaveLength(1);
    w.fake.tick(1);
    w.events.message(`${R} ${R + 100}`);
    expect(w.trips.map((t) => t.script)).toEqual([READ_SCRIPT, READ_SCRIPT]);
  });
});

describe('a pause heard of before the first round trip', () => {
  it('is sent once Redis’s clock is known, for what is left of it', async () => {
    const w = world();
    await w.subscribe(); // the read is sent at 0
    w.fake.tick(100);
    w.sharing.share(2000); // until 2100
    expect(w.trips).toHaveLength(1);
    w.fake.tick(200);
    w.trips[0]?.answer([R, '']); // a 300 ms round trip: the offset is R - 150
    await settle();
    expect(holds(w)).toEqual([['1800', String(R + 1950)]]);
  });

  it('is not sent when it is over by the time Redis answers', async () => {
    const w = world();
    await w.subscribe();
    w.sharing.share(500);
    w.fake.tick(500);
    w.trips[0]?.answer([R, '']);
    await settle();
    expect(w.trips).toHaveLength(1);
    expect(w.errors).toEqual([]);
  });

  it('waits, through an answer too slow to tell the clock and a lost connection, for the next good round trip', async () => {
    const w = world();
    await w.subscribe();
    w.fake.tick(100);
    w.sharing.share(5000); // until 5100
    w.ready = false;
    w.fake.tick(1400);
    w.trips[0]?.answer([R, '']); // a 1.5 s round trip: no clock sample
    await settle();
    w.ready = true;
    w.events.ready(); // the connection is back: the gate reads again
    expect(w.trips.map((t) => t.script)).toEqual([READ_SCRIPT, READ_SCRIPT]);
    w.fake.tick(100);
    w.trips[1]?.answer([R, '']);
    await settle();
    expect(holds(w)).toEqual([['3500', String(R + 3550)]]);
  });
});

describe('reading the key', () => {
  it('reads once at a time: a reconnection during a read asks for one more read after it', async () => {
    const w = world();
    await w.subscribe();
    w.events.ready();
    w.events.ready();
    expect(w.trips).toHaveLength(1);
    w.trips[0]?.answer([R, '']);
    await settle();
    expect(w.trips).toHaveLength(2);
    w.trips[1]?.answer([R, '']);
    await settle();
    expect(w.trips.map((t) => [t.script, t.args])).toEqual([
      [READ_SCRIPT, []],
      [READ_SCRIPT, []],
    ]);
  });

  it('does not read again after close', async () => {
    const w = world();
    await w.subscribe();
    w.events.ready();
    w.sharing.close();
    w.trips[0]?.answer([R, '']);
    await settle();
    expect(w.trips).toHaveLength(1);
  });
});

describe('faults and close', () => {
  it('reports a client that throws instead of answering the first read', async () => {
    const thrown = new Error('the client threw');
    const w = world({
      run: () => {
        throw thrown;
      },
    });
    await w.subscribe();
    await w.sharing.started;
    expect(w.errors).toEqual([thrown]); // the first read
  });

  it('reports a client that throws when the hold is sent, and never throws itself', async () => {
    const thrown = new Error('the client threw');
    let calls = 0;
    const w = world({
      run: () => {
        if (++calls === 1) return Promise.resolve([R, '']);
        throw thrown;
      },
    });
    await w.subscribe();
    expect(() => w.sharing.share(1000)).not.toThrow();
    await settle();
    expect(w.errors).toEqual([thrown]);
  });

  it('reports a subscription that could not be opened, starts at once, and closes without throwing', async () => {
    const thrown = new Error('duplicate() threw');
    const w = world({
      subscribe: () => {
        throw thrown;
      },
    });
    await w.sharing.started;
    expect(w.errors).toEqual([thrown]);
    expect(() => w.sharing.close()).not.toThrow();
  });

  it('after close: reports nothing, holds no announcement, sends nothing, and drops the subscription once', async () => {
    const w = await synced();
    w.sharing.share(1000);
    w.sharing.close();
    w.sharing.close();
    expect(w.drops()).toBe(1);
    w.trips[1]?.fail(new Error('the connection was closed'));
    w.fake.tick(60_001); // the offset is stale: an announcement would have it read again
    w.events.message(`${R + 60_001} ${R + 62_001}`); // in flight when the gate closed
    w.events.message('garbage');
    w.events.error(new Error('socket closed'));
    await settle();
    expect(w.errors).toEqual([]);
    expect(w.local.waitMs()).toBe(0);
    w.sharing.share(5000);
    expect(w.trips.map((t) => t.script)).toEqual([READ_SCRIPT, HOLD_SCRIPT]);
  });
});
