/**
 * Sharing one process's gate through Redis: a pause this process hears of is written to the key
 * (the hold script) and announced on the channel; a pause announced by another process, or found
 * in the key on (re)connection, is held here too. Everything towards Redis is fire-and-forget:
 * what fails goes to `report`, no promise is left unhandled, and no call through the gate ever
 * waits on Redis. The local gate is the truth of this process; Redis only lengthens its pause.
 */
import type { RetryAfterGate } from '../fleet/gate.js';
import type { RetryClock } from '../types.js';
import { createClockOffset } from './clock-offset.js';
import type { RedisConnection, Subscriber } from './connection.js';
import { HOLD_SCRIPT, READ_SCRIPT, type RedisPause, boundedLeft, pauseEndOf, pauseOfMessage, replyOf } from './scripts.js';

/** What sharing needs to know. */
export interface SharingSetup {
  readonly where: string;
  readonly connection: RedisConnection;
  readonly key: string;
  readonly local: RetryAfterGate;
  readonly clock: RetryClock;
  readonly report: (error: unknown) => void;
}

/** A running share. */
export interface Sharing {
  /** Settles when the subscription is in force and the key was read once (never rejects). */
  readonly started: Promise<void>;
  /** Shares a pause of `pauseMs` (already cut to `maxHoldMs`) that began now on the local clock. */
  share(pauseMs: number): void;
  /** Stops listening and sharing; the user's client stays open. */
  close(): void;
}

/** Starts sharing `setup.local`'s pauses through `setup.key`. */
export function startSharing(setup: SharingSetup): Sharing {
  const { where, connection, key, local, clock, report } = setup;
  const offset = createClockOffset();
  let closed = false;
  // Until when (local clock) the pause Redis has heard of from this process, or told it of, runs:
  // a hint that ends sooner changes nothing there, and costs no round trip.
  let sharedUntil = Number.NEGATIVE_INFINITY;
  // Until when (local clock) a pause heard of before the first round trip runs: it is shared once
  // Redis's clock is known, for what is left of it.
  let pendingUntil = Number.NEGATIVE_INFINITY;
  let reading = false;
  let readAgain = false;
  let subscribed = false;

  const fault = (error: unknown): void => {
    if (!closed) report(error);
  };

  /** Holds this process until `pause` ends. */
  const apply = (pause: RedisPause): void => {
    const now = clock.now();
    // Redis's time now: from the offset when there is one, else the pause's own (a message's
    // delivery time then counts as pause).
    const redisNow = offset.value === undefined ? pause.now : now + offset.value;
    const bounded = boundedLeft(where, pause, local.maxHoldMs, fault);
    const left = Math.min(bounded, pause.end - redisNow);
    if (left <= 0 || closed) return;
    local.hold(left);
    sharedUntil = Math.max(sharedUntil, now + left);
  };

  /**
   * A script's reply to a round trip begun at `sentAt`: Redis's time goes into the clock offset
   * first, so that garbage under the key does not keep the gate from sharing the next pause.
   */
  const onReply = (reply: unknown, sentAt: number): void => {
    const { now, end } = replyOf(where, reply);
    offset.add(sentAt, clock.now(), now);
    try {
      apply({ now, end: pauseEndOf(where, end) });
    } finally {
      const left = pendingUntil - clock.now();
      if (offset.value !== undefined && left > 0) {
        pendingUntil = Number.NEGATIVE_INFINITY;
        share(left);
      }
    }
  };

  function share(pauseMs: number): void {
    const now = clock.now();
    // A client that says it is down would queue the command and send it late: the pause stays
    // here. Before the first round trip there is no way to say when it ends on Redis's clock.
    if (closed || now + pauseMs <= sharedUntil || !connection.ready()) return;
    if (offset.value === undefined) {
      pendingUntil = Math.max(pendingUntil, now + pauseMs);
      return;
    }
    sharedUntil = now + pauseMs;
    const meant = Math.ceil(now + pauseMs + offset.value);
    const args = [String(Math.ceil(pauseMs)), String(meant), String(local.maxHoldMs), key];
    call(HOLD_SCRIPT, args)
      .then((reply) => onReply(reply, now))
      .catch(fault);
  }

  /** Reads the key (and Redis's time); one read at a time, one more if asked for meanwhile. */
  const read = (): Promise<void> => {
    if (reading) {
      readAgain = true;
      return Promise.resolve();
    }
    reading = true;
    const sentAt = clock.now();
    return call(READ_SCRIPT, [])
      .then((reply) => onReply(reply, sentAt))
      .catch(fault)
      .finally(() => {
        reading = false;
        if (readAgain && !closed) {
          readAgain = false;
          void read();
        }
      });
  };

  /** A script's reply, as a promise even from a client that throws or answers synchronously. */
  const call = (script: string, args: readonly string[]): Promise<unknown> => {
    try {
      return Promise.resolve(connection.run(script, key, args));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const onMessage = (text: string): void => {
    if (closed) return;
    try {
      apply(pauseOfMessage(where, text));
    } catch (error) {
      fault(error);
      return;
    }
    // The offset rests on the last round trip: refresh it once a minute while pauses come.
    if (offset.stale(clock.now())) void read();
  };
  // A reconnection may have missed announcements: read what is in force. Before the first
  // subscription is in force the first read is still to come. Only the subscribing connection
  // is watched: it drops with Redis as the user's client does, and a listener per gate on the
  // user's client would soon pass the ten an event emitter warns at (one gate per host).
  const onReady = (): void => {
    if (subscribed && !closed) void read();
  };

  let subscriber: Subscriber | undefined;
  const started = new Promise<void>((resolve) => {
    try {
      subscriber = connection.subscribe(key, { message: onMessage, ready: onReady, error: fault });
    } catch (error) {
      fault(error);
      resolve();
      return;
    }
    subscriber.subscribed
      .then(() => {
        subscribed = true;
        return read();
      })
      .catch(fault)
      .finally(resolve);
  });

  return {
    started,
    share,
    close() {
      if (closed) return;
      closed = true;
      subscriber?.close();
    },
  };
}
