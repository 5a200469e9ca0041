// The recipe of docs/recipes.md ("A Retry-After gate for every process"), run as shown against a
// real redis-server: one gate per host, made once, and shared with another process's gate.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisGate, createRedisGate } from '../../src/redis/index.js';
import { recipeRegionsOf } from '../clients/recipe-kit.js';
import { CLIENTS, type TestClient, until } from './clients.js';
import { type RedisServer, startRedis } from './server.js';

// recipe:begin
const gates = new Map<string, Promise<RedisGate>>();

/** The gate of `url`'s host, shared with every process of the service through `client`. */
function gateFor(client: object, url: string): Promise<RedisGate> {
  const host = new URL(url).host;
  let gate = gates.get(host);
  if (gate === undefined) {
    gate = createRedisGate({ client, key: `tenacious:gate:${host}`, onError: (error) => console.warn('tenacious gate', error) });
    gates.set(host, gate);
  }
  return gate;
}
// recipe:end

let redis: RedisServer;
let clients: TestClient[] = [];
beforeAll(async () => {
  redis = await startRedis();
  clients = [await CLIENTS['node-redis'](redis.url), await CLIENTS.ioredis(redis.url)];
}, 15_000);
afterAll(async () => {
  for (const gate of gates.values()) await (await gate).close();
  for (const client of clients) await client.close();
  await redis?.stop();
});

it('runs the code the recipes show', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('tenacious:gate:') as unknown, shown: true }]);
});

it('makes one gate per host, keyed by the host, shared with the other processes', async () => {
  const [mine, theirs] = clients as [TestClient, TestClient];
  const gate = await gateFor(mine.client, 'https://api.example.com/items/1');
  expect(await gateFor(mine.client, 'https://api.example.com/items/2')).toBe(gate);
  expect(await gateFor(mine.client, 'https://other.example.com/')).not.toBe(gate);
  const elsewhere = await createRedisGate({ client: theirs.client, key: 'tenacious:gate:api.example.com', spread: false });
  gate.hold(1500);
  await until(() => elsewhere.waitMs() > 1000, 2000, 'the pause reaching the other process');
  await elsewhere.close();
});
