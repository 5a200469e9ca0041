// Scenario 1, contention: the model of the AWS Architecture Blog's backoff simulator
// ("Exponential Backoff And Jitter", 2015). N clients each want to update one row under
// optimistic concurrency: read the version, then write conditionally on it. A write fails if
// another write landed since the read, and the client retries the whole read-then-write.
// Every hop (read request, read reply, write request, write reply) takes |Normal(10, 2)| ms.
import { type Jitter, retry } from '../../src/index.js';
import { networkDelay, seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

/** The AWS model's backoff: base 5 ms, cap 2 s. */
export const CONTENTION_BASE_MS = 5;
export const CONTENTION_CAP_MS = 2000;

/** Outcome of one trial: every client has written once. */
export interface ContentionTrial {
  /** Write attempts the server received (the AWS simulator's "calls"). */
  calls: number;
  /** Virtual milliseconds until the last client learned its write succeeded. */
  timeMs: number;
}

/** gRPC ABORTED, the shape a conditional write's conflict takes; the default classification retries it. */
function conflict(): Error {
  return Object.assign(new Error('ABORTED: the row changed since it was read'), { code: 10 });
}

/**
 * Runs one trial with `clients` clients and the given jitter, through the real retry().
 *
 * The AWS simulator sleeps `min(cap, base · 2^n)` with n = 1 for the first retry; retry()
 * counts from n = 0, so its initialDelayMs is 2 · base = 10 ms, which gives the same sleeps.
 */
export async function contentionTrial(clients: number, jitter: Jitter, seed: number): Promise<ContentionTrial> {
  const clock = installVirtualClock();
  try {
    const net = seededRandom(streamSeed(seed, 0));
    const rng = seededRandom(streamSeed(seed, 1));
    let version = 0;
    let calls = 0;
    let finished = 0;
    let lastAt = 0;
    const hop = () => clock.sleep(networkDelay(net));

    const readThenWrite = async (): Promise<void> => {
      await hop(); // read request
      const seen = version;
      await hop(); // read reply
      await hop(); // write request
      calls++;
      const ok = version === seen;
      if (ok) version++;
      await hop(); // write reply
      if (!ok) throw conflict();
    };
    const options = {
      backoff: { initialDelayMs: 2 * CONTENTION_BASE_MS, multiplier: 2, maxDelayMs: CONTENTION_CAP_MS, jitter },
      deadlineMs: 3_600_000,
      rng,
    };
    let gaveUp: unknown;
    for (let i = 0; i < clients; i++) {
      retry(readThenWrite, options).then(
        () => {
          finished++;
          lastAt = clock.now();
        },
        (error: unknown) => {
          gaveUp ??= error;
          finished++;
        },
      );
    }
    await clock.runUntil(() => finished === clients);
    // With a one-hour deadline nobody should give up; if one did, the numbers mean nothing.
    if (gaveUp !== undefined) throw new Error('a contention client gave up', { cause: gaveUp });
    return { calls, timeMs: lastAt };
  } finally {
    clock.uninstall();
  }
}

/** Mean calls and time over `trials` seeded trials. */
export async function contention(
  clients: number,
  jitter: Jitter,
  trials: number,
  seed: number,
): Promise<{ calls: number; timeMs: number }> {
  let calls = 0;
  let timeMs = 0;
  for (let t = 0; t < trials; t++) {
    const trial = await contentionTrial(clients, jitter, streamSeed(seed, 100 + t));
    calls += trial.calls;
    timeMs += trial.timeMs;
  }
  return { calls: calls / trials, timeMs: timeMs / trials };
}
