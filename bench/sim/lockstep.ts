// Scenario 3, synchronisation at the cap. Many clients fail at the same moment (a long outage
// starts) and keep retrying with a backoff capped at 32 s. Google's formula adds its jitter
// before truncating, so once 2^n passes the cap every client waits exactly the cap: the fleet
// keeps the arrival pattern it had when it reached the cap, and hits the server in bursts
// every 32 s. Measured as the peak number of arrivals in one 100 ms window.
import { type Jitter, retry } from '../../src/index.js';
import { networkDelay, seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

export interface LockstepConfig {
  clients: number;
  /** The outage starts at 0, when every client sends its request (spread over the first second). */
  outageMs: number;
  /** Arrivals are measured from this time to the end of the outage, once every client is at the cap. */
  measureFromMs: number;
  seed: number;
}

/** The schedule of Google's IAM and Cloud Storage pages: 1 s doubling to a 32 s cap; only the jitter varies. */
export const LOCKSTEP_BACKOFF = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000 } as const;

export interface LockstepResult {
  /** Highest arrivals in one 100 ms window during the measured span. */
  peakPer100ms: number;
  /** Mean arrivals per 100 ms window during the measured span. */
  meanPer100ms: number;
  /** Arrivals per 100 ms window, index = window since 0, up to the end of the outage. */
  arrivalsPer100ms: number[];
}

function unavailable(): Error {
  return Object.assign(new Error('HTTP 503 Service Unavailable'), { status: 503 });
}

export async function lockstep(config: LockstepConfig, jitter: Jitter): Promise<LockstepResult> {
  const { clients, outageMs, measureFromMs, seed } = config;
  const windows = Math.ceil(outageMs / 100);
  const clock = installVirtualClock();
  try {
    const net = seededRandom(streamSeed(seed, 0));
    const rng = seededRandom(streamSeed(seed, 1));
    const startRng = seededRandom(streamSeed(seed, 2));
    const hop = () => clock.sleep(networkDelay(net));
    const arrivalsPer100ms = new Array<number>(windows).fill(0);
    const attempt = async (): Promise<void> => {
      await hop();
      const t = clock.now();
      const down = t < outageMs;
      if (down) {
        const w = Math.floor(t / 100);
        arrivalsPer100ms[w] = (arrivalsPer100ms[w] as number) + 1;
      }
      await hop();
      if (down) throw unavailable();
    };
    const options = Object.freeze({
      backoff: { ...LOCKSTEP_BACKOFF, jitter },
      // Long enough to outlast the outage: the point is what the fleet does while it waits.
      deadlineMs: outageMs + 600_000,
      rng,
    });
    let done = 0;
    for (let c = 0; c < clients; c++) {
      const start = Math.floor(startRng() * 1000);
      void clock.sleep(start).then(() =>
        retry(attempt, options).then(
          () => done++,
          () => done++,
        ),
      );
    }
    await clock.runUntil(() => done === clients);

    let peak = 0;
    let sum = 0;
    const from = Math.floor(measureFromMs / 100);
    for (let w = from; w < windows; w++) {
      const a = arrivalsPer100ms[w] as number;
      peak = Math.max(peak, a);
      sum += a;
    }
    return { peakPer100ms: peak, meanPer100ms: sum / (windows - from), arrivalsPer100ms };
  } finally {
    clock.uninstall();
  }
}
