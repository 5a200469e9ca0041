/**
 * tenacious/redis: one Retry-After gate for every process of a service, shared through a Redis
 * key. node-redis (`redis`) and ioredis are optional peer dependencies; nothing of either is
 * imported: you pass your own client.
 *
 * @example
 * import { createClient } from 'redis';
 * import { createRedisGate } from 'tenacious/redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const gate = await createRedisGate({ client, key: 'tenacious:gate:api.example.com' });
 *
 * @module tenacious/redis
 */
export { REDIS_ANSWER_BUDGET_MS, type RedisGate, type RedisGateOptions, createRedisGate } from './redis-gate.js';
