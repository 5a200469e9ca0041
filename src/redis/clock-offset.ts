/**
 * Redis's clock seen from this process: the offset between Redis's `TIME` and the gate's own
 * steady clock, measured from round trips. A reply's time was read somewhere between sending and
 * receiving, so it is taken at the round trip's midpoint, within half the round trip either way;
 * the sample with the shortest round trip is the most exact, and a fresher one replaces it once
 * it is old, so that a drift between the clocks (or an NTP step on Redis's host) is followed.
 */

/** A round trip longer than this says more about a queue than about the clock: its sample is not taken. */
export const MAX_SAMPLE_RTT_MS = 1000;

/** A sample older than this gives way to any new one that passes {@link MAX_SAMPLE_RTT_MS}. */
export const SAMPLE_TTL_MS = 60_000;

/** The offset and what it rests on. */
export interface ClockOffset {
  /** Redis's time minus this process's clock, in ms; undefined before the first good sample. */
  readonly value: number | undefined;
  /** Whether the offset rests on no sample, or one older than {@link SAMPLE_TTL_MS} at `now`. */
  stale(now: number): boolean;
  /**
   * Records a round trip: sent at `sentAt`, answered at `receivedAt` (both on this process's
   * clock) with Redis's time `redisNow`. Returns whether the sample was taken.
   */
  add(sentAt: number, receivedAt: number, redisNow: number): boolean;
}

/** An offset with no sample yet. */
export function createClockOffset(): ClockOffset {
  let value: number | undefined;
  let rtt = Number.POSITIVE_INFINITY;
  let takenAt = Number.NEGATIVE_INFINITY;
  return {
    get value() {
      return value;
    },
    stale: (now) => value === undefined || now - takenAt > SAMPLE_TTL_MS,
    add(sentAt, receivedAt, redisNow) {
      const trip = receivedAt - sentAt;
      if (!(trip >= 0 && trip <= MAX_SAMPLE_RTT_MS)) return false;
      if (trip > rtt && receivedAt - takenAt <= SAMPLE_TTL_MS) return false;
      value = redisNow - (sentAt + receivedAt) / 2;
      rtt = trip;
      takenAt = receivedAt;
      return true;
    },
  };
}
