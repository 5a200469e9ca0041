// The gate's view of a client (src/redis/connection.ts): when each kind says it is connected,
// which messages of its subscribing duplicate reach the gate, and how that duplicate is dropped.
// Client-shaped objects stand for what differs between versions and modes of the two clients;
// a real ioredis client for the one state a test cannot reach through a running gate.
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type SubscriberEvents, connectionOf } from '../../src/redis/connection.js';

/** Events that record what reaches the gate. */
function recorder(): SubscriberEvents & { readonly messages: string[] } {
  const messages: string[] = [];
  return { messages, message: (text) => void messages.push(text), ready() {}, error() {} };
}

const ioredisShape = (more: object = {}) => ({ eval() {}, evalsha() {}, on() {}, duplicate() {}, ...more });
const nodeRedisShape = (more: object = {}) => ({ eval() {}, evalSha() {}, on() {}, duplicate() {}, ...more });

describe('whether the client says it is connected', () => {
  it('ioredis: ready, and a lazyConnect client not yet used (a command connects it); not while it connects or after it ended', () => {
    const lazy = new Redis('redis://127.0.0.1:1', { lazyConnect: true });
    expect(lazy.status).toBe('wait');
    expect(connectionOf('g', lazy).ready()).toBe(true);
    lazy.disconnect();
    expect(connectionOf('g', ioredisShape({ status: 'ready' })).ready()).toBe(true);
    expect(connectionOf('g', ioredisShape()).ready()).toBe(true); // no status to go by: it can only try
    for (const status of ['connecting', 'connect', 'reconnecting', 'close', 'end']) {
      expect(connectionOf('g', ioredisShape({ status })).ready()).toBe(false);
    }
  });

  it('node-redis: unless isReady is false', () => {
    expect(connectionOf('g', nodeRedisShape({ isReady: true })).ready()).toBe(true);
    expect(connectionOf('g', nodeRedisShape()).ready()).toBe(true); // a cluster has no isReady
    expect(connectionOf('g', nodeRedisShape({ isReady: false })).ready()).toBe(false);
  });
});

describe('the subscribing duplicate', () => {
  it('ioredis: passes on the messages of the gate’s channel only', async () => {
    const duplicate = Object.assign(new EventEmitter(), { subscribe: async () => 1 });
    const events = recorder();
    const subscriber = connectionOf('g', ioredisShape({ duplicate: () => duplicate })).subscribe('gate', events);
    await subscriber.subscribed;
    duplicate.emit('message', 'another', '1 2');
    duplicate.emit('message', 'gate', '3 4');
    duplicate.emit('message', Buffer.from('gate'), Buffer.from('5 6'));
    expect(events.messages).toEqual(['3 4', '5 6']);
  });

  it('node-redis: calls only the methods the duplicate has', async () => {
    const subscribed: string[] = [];
    const duplicate = { subscribe: async (channel: string) => void subscribed.push(channel) }; // no on(), no connect()
    const subscriber = connectionOf('g', nodeRedisShape({ duplicate: () => duplicate })).subscribe('gate', recorder());
    await subscriber.subscribed;
    expect(subscribed).toEqual(['gate']);
  });

  it.each([
    [['destroy', 'disconnect', 'quit'], 'destroy'],
    [['disconnect', 'quit', 'close'], 'disconnect'],
    [['quit', 'close'], 'quit'],
    [['close'], undefined],
  ])('is dropped at once: of %j, close() calls %s', async (methods, called) => {
    const calls: string[] = [];
    const duplicate = Object.assign(
      new EventEmitter(),
      { subscribe: async () => 1 },
      Object.fromEntries(methods.map((name) => [name, () => void calls.push(name)])),
    );
    const subscriber = connectionOf('g', ioredisShape({ duplicate: () => duplicate })).subscribe('gate', recorder());
    await subscriber.subscribed;
    subscriber.close();
    expect(calls).toEqual(called === undefined ? [] : [called]);
  });

  it('is closed enough when closing it throws or rejects', async () => {
    for (const end of [
      () => {
        throw new Error('destroy threw');
      },
      () => Promise.reject(new Error('destroy rejected')),
    ]) {
      const duplicate = Object.assign(new EventEmitter(), { subscribe: async () => 1, destroy: end });
      const subscriber = connectionOf('g', ioredisShape({ duplicate: () => duplicate })).subscribe('gate', recorder());
      await subscriber.subscribed;
      expect(() => subscriber.close()).not.toThrow();
    }
    await new Promise((resolve) => setImmediate(resolve)); // a rejection left unhandled would fail the test here
  });
});
