// The two Redis clients tenacious/redis is tested with, each made the way its README shows, with
// a fast reconnection (50 ms) so that the restart tests stay short, and an 'error' listener (both
// clients ask for one: without it a lost connection ends the process).
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/** A connected client, and how to end it. */
export interface TestClient {
  readonly client: object;
  /** A command on the client, for the test's own reads and writes: `['SET', 'k', 'v']`. */
  command(args: readonly string[]): Promise<unknown>;
  close(): Promise<void>;
}

/** The clients by name, each a factory that resolves once connected. */
export const CLIENTS = {
  'node-redis': async (url: string): Promise<TestClient> => {
    const client = createClient({ url, socket: { reconnectStrategy: () => 50 } });
    client.on('error', () => {});
    await client.connect();
    return {
      client,
      command: (args) => client.sendCommand([...args]),
      close: async () => void client.destroy(),
    };
  },
  ioredis: async (url: string): Promise<TestClient> => {
    const client = new Redis(url, { retryStrategy: () => 50 });
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve);
      client.once('end', () => reject(new Error(`ioredis could not connect to ${url}`)));
    });
    return {
      client,
      command: ([name, ...args]) => client.call(name as string, ...args),
      close: async () => client.disconnect(),
    };
  },
} as const;

/** The names of {@link CLIENTS}. */
export type ClientName = keyof typeof CLIENTS;

/** Resolves once `condition()` holds; rejects after `ms` of real time (Redis and pub/sub are real). */
export async function until(condition: () => boolean | Promise<boolean>, ms = 3000, what = 'the condition'): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > ms) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
