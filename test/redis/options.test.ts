// createRedisGate's options: every bad one rejects with a message that names createRedisGate, the
// option and the value, before anything is sent to Redis; a client is known by its methods.
import { describe, expect, it } from 'vitest';
import { createRedisGate } from '../../src/redis/index.js';

/** The least a node-redis client has for the gate (nothing here is ever called). */
const nodeRedisShape = { eval() {}, evalSha() {}, duplicate() {}, on() {} };
/** A function is no client, whatever methods it carries. */
function redisLike(): void {}

async function rejection(options: unknown): Promise<Error> {
  return createRedisGate(options as never).then(
    () => {
      throw new Error('resolved');
    },
    (error: Error) => error,
  );
}

describe('createRedisGate: bad options', () => {
  it.each([
    [undefined, TypeError, 'createRedisGate: options must be an object, got undefined'],
    [{ key: 'k' }, TypeError, 'createRedisGate: options.client must be a node-redis or ioredis client, got undefined'],
    [{ client: nodeRedisShape }, TypeError, 'createRedisGate: options.key must be a non-empty string, got undefined'],
    [{ client: nodeRedisShape, key: '' }, TypeError, 'createRedisGate: options.key must be a non-empty string, got ""'],
    [{ client: nodeRedisShape, key: 7 }, TypeError, 'createRedisGate: options.key must be a non-empty string, got 7'],
    [{ client: null, key: 'k' }, TypeError, 'createRedisGate: options.client must be a node-redis or ioredis client, got null'],
    [
      { client: Object.assign(redisLike, nodeRedisShape), key: 'k' },
      TypeError,
      'createRedisGate: options.client must be a node-redis or ioredis client, got a function (redisLike)',
    ],
    [
      { client: 'redis://localhost', key: 'k' },
      TypeError,
      'createRedisGate: options.client must be a node-redis or ioredis client, got "redis://localhost"',
    ],
    [
      { client: nodeRedisShape, key: 'k', maxHoldMs: Number.POSITIVE_INFINITY },
      RangeError,
      'createRedisGate: options.maxHoldMs must be a finite number >= 0, got Infinity',
    ],
    [
      { client: nodeRedisShape, key: 'k', maxHoldMs: -1 },
      RangeError,
      'createRedisGate: options.maxHoldMs must be a finite number >= 0, got -1',
    ],
    [{ client: nodeRedisShape, key: 'k', spread: 'yes' }, TypeError, 'createRedisGate: options.spread must be a boolean, got "yes"'],
    [{ client: nodeRedisShape, key: 'k', rng: 0.5 }, TypeError, 'createRedisGate: options.rng must be a function, got 0.5'],
    [{ client: nodeRedisShape, key: 'k', onError: 'log' }, TypeError, 'createRedisGate: options.onError must be a function, got "log"'],
    [
      { client: nodeRedisShape, key: 'k', clock: Date },
      TypeError,
      'createRedisGate: options.clock must be a clock with now(), setTimeout() and clearTimeout() (e.g. systemClock), got a function (Date)',
    ],
    [{ client: nodeRedisShape, key: 'k', maxHold: 5 }, TypeError, 'createRedisGate: unknown option "maxHold" (did you mean "maxHoldMs"?)'],
  ])('%j', async (options, kind, message) => {
    const error = await rejection(options);
    expect(error).toBeInstanceOf(kind);
    expect(error.message).toBe(message);
  });

  it('says which methods a client lacks, for the nearer of the two clients', async () => {
    expect((await rejection({ client: {}, key: 'k' })).message).toBe(
      'createRedisGate: options.client must be a node-redis or ioredis client: it has no eval, duplicate, on, evalSha (node-redis) or evalsha (ioredis), got {}',
    );
    const { duplicate: _, ...noDuplicate } = nodeRedisShape;
    expect((await rejection({ client: noDuplicate, key: 'k' })).message).toMatch(
      /^createRedisGate: options\.client must be a node-redis or ioredis client: it has no duplicate, got \{/,
    );
    const { duplicate: __, on: ___, ...bare } = nodeRedisShape;
    expect((await rejection({ client: bare, key: 'k' })).message).toMatch(/: it has no duplicate, on, got \{/);
    const ioredisNoOn = { eval() {}, evalsha() {}, duplicate() {} };
    expect((await rejection({ client: ioredisNoOn, key: 'k' })).message).toMatch(/: it has no on, got \{/);
  });

  it("names only the methods a client lacks when it has both clients' script method", async () => {
    const both = { eval() {}, evalSha() {}, evalsha() {}, duplicate() {} };
    expect((await rejection({ client: both, key: 'k' })).message).toMatch(
      /^createRedisGate: options\.client must be a node-redis or ioredis client: it has no on, got \{/,
    );
  });

  it('throws for a hold no server can ask for, as createRetryAfterGate does, without touching Redis', async () => {
    const calls: string[] = [];
    const silent = {
      eval: () => {
        calls.push('eval');
        return new Promise(() => {});
      },
      evalSha() {},
      on() {},
      duplicate: () => ({ on() {}, connect: () => new Promise(() => {}), destroy() {} }),
    };
    let fired: (() => void) | undefined;
    const clock = { now: () => 0, setTimeout: (f: () => void) => (fired = f), clearTimeout() {} };
    const creating = createRedisGate({ client: silent, key: 'k', clock, spread: false });
    fired?.(); // the answer budget runs out on the gate's own clock
    const gate = await creating;
    expect(() => gate.hold(-1)).toThrow(new RangeError('gate.hold(ms): ms must be a number >= 0 (Infinity for "forever"), got -1'));
    expect(() => gate.hold(Number.NaN)).toThrow(RangeError);
    gate.hold(Number.POSITIVE_INFINITY); // a server's number too large for a double: maxHoldMs
    expect(gate.waitMs()).toBe(64_000);
    expect(calls).toEqual([]); // no round trip was ever answered: nothing to map a pause onto Redis's clock
    await gate.close();
  });
});
