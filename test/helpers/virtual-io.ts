// Real sockets under a virtual clock: the fake clock runs only when a test ticks it, while I/O
// needs the event loop to turn. setImmediate is not faked (test/helpers/clock.ts), so waiting on
// it lets the sockets work without any virtual time passing: a test ticks the clock to the
// moment it means, then lets the network catch up at that moment.

/**
 * Lets the event loop turn (I/O, no virtual time) until `condition` holds; fails naming `what`
 * after `withinMs` of real time (process.hrtime, which no fake clock replaces).
 */
export async function ioUntil(condition: () => boolean, what: string, withinMs = 5000): Promise<void> {
  const until = process.hrtime.bigint() + BigInt(withinMs) * 1_000_000n;
  while (!condition()) {
    if (process.hrtime.bigint() > until) throw new Error(`not within ${withinMs} ms of real time: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
