/**
 * createRedisGate: the Retry-After gate of every process of a service, through one Redis key. Each
 * process keeps its own gate (fleet/gate.ts), so a call never waits on Redis; a pause one
 * process hears of reaches the others by pub/sub (sharing.ts), kept on Redis's clock.
 */
import { type RetryAfterGate, createRetryAfterGate } from '../fleet/gate.js';
import { CLOCK_RULE, systemClock } from '../runtime/clock.js';
import type { RetryClock } from '../types.js';
import { BOOLEAN, FUNCTION, type FieldRules, atLeast, checkField, readChecked } from '../util/check.js';
import { connectionOf } from './connection.js';
import { startSharing } from './sharing.js';

const WHERE = 'createRedisGate';

/**
 * How long creation waits for Redis, in milliseconds on the gate's clock: past it the gate is
 * returned local-only (the fault goes to `onError`) and starts sharing once Redis answers. A
 * service's start should not hang on a dead Redis.
 *
 * @example
 * // A readiness probe that allows for the gate's creation.
 * const startupBudgetMs = 5_000 + REDIS_ANSWER_BUDGET_MS;
 */
export const REDIS_ANSWER_BUDGET_MS = 1000;

/**
 * Options of {@link createRedisGate}: where to share (`client`, `key`), and those of
 * `createRetryAfterGate` for the local gate.
 *
 * @example
 * const options: RedisGateOptions = { client, key: 'tenacious:gate:api.example.com', maxHoldMs: 30_000, onError: (e) => log.warn(e) };
 */
export interface RedisGateOptions {
  /**
   * Your connected client: node-redis (`createClient()` or `createCluster()`, redis ≥ 4) or
   * ioredis (`new Redis()`, `new Cluster()`). The gate runs two Lua scripts through it and
   * subscribes on a duplicate (`client.duplicate()`); Sentinel, TLS and authentication are the
   * client's settings. Keep an `'error'` listener on it, as both clients ask.
   */
  client: object;
  /**
   * The key that holds the pause, one per host the fleet calls (`tenacious:gate:api.example.com`);
   * pauses are announced on the channel of the same name. Whoever can write it can pause the
   * fleet for up to `maxHoldMs`: give it a prefix your ACLs keep to the service.
   */
  key: string;
  /**
   * The longest pause one hint, or a value read from Redis, may impose, in milliseconds. Default
   * 64 000, as `createRetryAfterGate`'s. Finite here: a pause stored in Redis expires with it.
   */
  maxHoldMs?: number;
  /** As `createRetryAfterGate`'s: held calls come back spread over the pause's length. Default true. */
  spread?: boolean;
  /** Source of randomness in [0, 1) for the spread. Default `Math.random`. */
  rng?: () => number;
  /**
   * Told of every fault on the way to Redis (a lost connection, a script that failed, a value
   * under the key or on the channel that is not a pause, or longer than `maxHoldMs`). None of
   * them fails or delays a call. Default: ignore them. What it throws is ignored.
   */
  onError?: (error: unknown) => void;
  /** The clock the local pause and the creation budget are timed on. Default `systemClock`. */
  clock?: RetryClock;
}

/**
 * A gate shared through Redis: what `createRetryAfterGate()` returns, and `close()`.
 *
 * @example
 * const gate: RedisGate = await createRedisGate({ client, key: 'tenacious:gate:api.example.com' });
 * process.on('SIGTERM', () => void gate.close());
 */
export interface RedisGate extends RetryAfterGate {
  /**
   * Stops listening (drops the subscribing connection) and sharing; the gate still pauses this
   * process's calls. Leaves your client open. Never rejects.
   */
  close(): Promise<void>;
}

const RULES: FieldRules = {
  client: { ok: (v) => typeof v === 'object' && v !== null, rule: 'be a node-redis or ioredis client' },
  key: { ok: (v) => typeof v === 'string' && v !== '', rule: 'be a non-empty string' },
  maxHoldMs: atLeast(0),
  spread: BOOLEAN,
  rng: FUNCTION,
  onError: FUNCTION,
  clock: CLOCK_RULE,
};

/**
 * Creates a Retry-After gate that every process of a service shares through one Redis key:
 * usable wherever `gate` is (`retry`, `retryFetch`, the adapters). A server's pause that one
 * process hears of holds the calls of all of them, first attempts included.
 *
 * - **No round trip on the success path**: `waitMs()` reads the local gate. A pause reaches
 *   the other processes by pub/sub, and the key is read again on every reconnection.
 * - **One pause**: `hold(ms)` holds this process at once, then extends the pause in Redis to
 *   max(its end, now + ms) in one Lua script, and announces it.
 * - **Redis's clock**: a pause ends at a moment on Redis's `TIME`; each process maps it to its
 *   own clock through round trips, so hosts whose clocks disagree still agree on when it ends.
 * - **Not a point of failure**: while Redis is unreachable, slow or holding garbage, the gate
 *   pauses this process as `createRetryAfterGate()` would and reports to `onError`; nothing read
 *   from Redis holds longer than `maxHoldMs`. A pause held while Redis was down is not sent
 *   later as a fresh one.
 *
 * Resolves once the pause in force is read and the gate listens, or after
 * {@link REDIS_ANSWER_BUDGET_MS} (1 s on `clock`) with a local-only gate that starts sharing
 * when Redis answers. Rejects only for bad options: a TypeError/RangeError naming the option.
 *
 * @example
 * import { createClient } from 'redis';
 * import { createRedisGate } from 'tenacious/redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const gate = await createRedisGate({ client, key: 'tenacious:gate:api.example.com', onError: (e) => console.warn(e) });
 * await retryFetch('https://api.example.com/items', undefined, { gate });
 * await gate.close();
 */
export async function createRedisGate(options: RedisGateOptions): Promise<RedisGate> {
  const values = readChecked(WHERE, options, RULES) as Partial<RedisGateOptions>;
  checkField(WHERE, 'options', 'client', RULES, values.client);
  checkField(WHERE, 'options', 'key', RULES, values.key);
  const { client, key, onError = ignore, clock = systemClock, maxHoldMs, spread, rng } = values as RedisGateOptions;
  const connection = connectionOf(WHERE, client);
  const local = createRetryAfterGate(definedOnly({ maxHoldMs, spread, rng, clock }));
  const report = (error: unknown): void => {
    try {
      onError(error);
    } catch {
      // The application's logger failing is no reason to fail a call.
    }
  };
  const sharing = startSharing({ where: WHERE, connection, key, local, clock, report });
  await withinBudget(sharing.started, clock, () =>
    report(
      new Error(`${WHERE}: Redis did not answer within ${REDIS_ANSWER_BUDGET_MS} ms; the gate pauses this process alone until it does`),
    ),
  );
  const { waitMs } = local;
  return {
    maxHoldMs: local.maxHoldMs,
    waitMs,
    hold(ms: number): void {
      local.hold(ms);
      sharing.share(Math.min(ms, local.maxHoldMs));
    },
    close: async () => sharing.close(),
  };
}

/** The default `onError`. */
function ignore(): void {}

/** `started`, or the budget's end on `clock`, whichever is first; `late` is told of the second. */
function withinBudget(started: Promise<void>, clock: RetryClock, late: () => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(() => {
      late();
      resolve();
    }, REDIS_ANSWER_BUDGET_MS);
    void started.then(() => {
      clock.clearTimeout(timer);
      resolve();
    });
  });
}

/** The gate's options without the ones left out: createRetryAfterGate applies its defaults. */
function definedOnly<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as T;
}
