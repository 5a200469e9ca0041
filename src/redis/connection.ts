/**
 * The user's Redis client, whichever it is: node-redis (the `redis` package, a client or a
 * cluster) or ioredis (a `Redis` or a `Cluster`). Nothing of either is imported: the client is
 * told apart by its methods (node-redis spells `evalSha`, ioredis `evalsha`), and the gate uses
 * only what both have in some form: run a script on one key, tell whether the connection is up,
 * and open a duplicate connection that subscribes to one channel.
 */
import { describe, hasMethods } from '../util/check.js';

/** The gate's view of the user's client. */
export interface RedisConnection {
  /** Runs `script` with one key and string arguments; the reply as the client gives it. */
  run(script: string, key: string, args: readonly string[]): Promise<unknown>;
  /** False when the client says it is not connected (a command would wait in its offline queue). */
  ready(): boolean;
  /** Opens a duplicate of the client that subscribes to `channel`; the client stays as it was. */
  subscribe(channel: string, events: SubscriberEvents): Subscriber;
}

/** What the subscribing connection reports. */
export interface SubscriberEvents {
  message(text: string): void;
  /** The connection is up again after a reconnection (the client subscribes again on its own). */
  ready(): void;
  error(error: unknown): void;
}

/** The subscribing connection. */
export interface Subscriber {
  /** Settles when the first subscription is in force. */
  readonly subscribed: Promise<void>;
  /** Drops the connection at once: a dead Redis cannot hold it open. */
  close(): void;
}

const COMMON = ['eval', 'duplicate', 'on'];
// The one method each client has of its own: the script method, spelled two ways.
const NODE_REDIS = [...COMMON, 'evalSha'];
const IOREDIS = [...COMMON, 'evalsha'];

type Methods = Record<string, unknown>;
type Method = (...args: unknown[]) => unknown;

/** Calls `object[name](...args)`, if it is there. */
function invoke(object: Methods, name: string, ...args: unknown[]): unknown {
  return (object[name] as Method | undefined)?.call(object, ...args);
}

/**
 * The gate's view of `client` (an object: the options' rule refuses anything else first), or a
 * TypeError that says which methods a node-redis or an ioredis client has and this one lacks.
 */
export function connectionOf(where: string, client: object): RedisConnection {
  if (hasMethods(client, NODE_REDIS)) return nodeRedis(client as Methods);
  if (hasMethods(client, IOREDIS)) return ioredis(client as Methods);
  return fail(
    `${where}: options.client must be a node-redis or ioredis client: it has no ${missingText(client as Methods)}, got ${describe(client)}`,
  );
}

/**
 * The methods `client` lacks to be the nearer of the two clients: those both have, then the
 * script method when it has neither spelling (it is then as near to either).
 */
function missingText(client: Methods): string {
  const lacks = (name: string) => typeof client[name] !== 'function';
  const names = COMMON.filter(lacks);
  if (lacks('evalSha') && lacks('evalsha')) names.push('evalSha (node-redis) or evalsha (ioredis)');
  return names.join(', ');
}

function fail(message: string): never {
  throw new TypeError(message);
}

/** A duplicate's own 'error' listener: an emitter's 'error' with none would end the process. */
function duplicateOf(client: Methods, events: SubscriberEvents): Methods {
  const duplicate = invoke(client, 'duplicate') as Methods;
  invoke(duplicate, 'on', 'error', events.error);
  invoke(duplicate, 'on', 'ready', events.ready);
  return duplicate;
}

/** Drops `connection` at once, whatever the client calls that; what it rejects with is of no interest after close. */
function drop(connection: Methods): void {
  // The first that ends at once: node-redis's destroy (disconnect before v5), ioredis's
  // disconnect; quit, which waits for Redis to answer, only where there is nothing else.
  for (const name of ['destroy', 'disconnect', 'quit']) {
    if (typeof connection[name] !== 'function') continue;
    try {
      Promise.resolve(invoke(connection, name)).catch(() => {});
    } catch {
      // A client that throws while closing is closed enough.
    }
    return;
  }
}

function nodeRedis(client: Methods): RedisConnection {
  return {
    run: (script, key, args) => invoke(client, 'eval', script, { keys: [key], arguments: args }) as Promise<unknown>,
    // A cluster or an older client without the flag can only try.
    ready: () => client.isReady !== false,
    subscribe(channel, events) {
      const duplicate = duplicateOf(client, events);
      // A node-redis duplicate starts closed; connect() settles once it is up (it reconnects on its own).
      const subscribed = Promise.resolve(invoke(duplicate, 'connect')).then(() =>
        invoke(duplicate, 'subscribe', channel, (message: unknown) => events.message(String(message))),
      );
      return { subscribed: subscribed.then(() => {}), close: () => drop(duplicate) };
    },
  };
}

function ioredis(client: Methods): RedisConnection {
  return {
    run: (script, key, args) => invoke(client, 'eval', script, 1, key, ...args) as Promise<unknown>,
    // 'wait' is a lazyConnect client not yet used: a command connects it.
    ready: () => client.status === undefined || client.status === 'ready' || client.status === 'wait',
    subscribe(channel, events) {
      const duplicate = duplicateOf(client, events);
      invoke(duplicate, 'on', 'message', (from: unknown, message: unknown) => {
        if (String(from) === channel) events.message(String(message));
      });
      const subscribed = Promise.resolve(invoke(duplicate, 'subscribe', channel)).then(() => {});
      return { subscribed, close: () => drop(duplicate) };
    },
  };
}
