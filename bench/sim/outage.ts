// Scenario 2, outage: a fleet of clients, each sending one logical request per second, and a
// server that fails every request for a while, then recovers. Measures how much load the
// retries add while the server is down (amplification) and how long the fleet takes to get
// back to normal afterwards, for several ways of bounding retries.
//
// The server has a finite capacity (by default 20 % above the fleet's normal load) and sheds
// what exceeds it with a 503, so a burst of retries after the recovery has a cost, as in life.
import type { RetryOptions } from '../../src/index.js';
import { retry } from '../../src/index.js';
import { networkDelay, seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

export interface OutageConfig {
  /** Simulated clients, each with its own process (own budget or throttle, if any). */
  clients: number;
  /** Time between one client's logical requests, in ms; default 1,000 (1 request/s). */
  intervalMs?: number;
  /** Healthy time before the outage, in ms. */
  beforeMs: number;
  /** Length of the total outage, in ms. */
  outageMs: number;
  /** Time after the recovery during which clients keep sending, in ms. */
  afterMs: number;
  /** Requests per second the server can serve; the excess gets a 503. */
  capacityPerSec: number;
  seed: number;
}

/** One way of configuring the clients' retries. */
export interface OutageVariant {
  name: string;
  /**
   * The retry() options of one client. Called once per client, so a budget or throttle created
   * inside belongs to that client; one created outside is shared by the whole fleet.
   */
  clientOptions: (rng: () => number) => RetryOptions;
}

export interface OutageResult {
  name: string;
  /** Requests the server received during the outage ÷ logical requests issued during it. */
  amplification: number;
  /** Seconds from the recovery until every later second is back to normal (see below); Infinity if never. */
  recoverySec: number;
  /** Highest server arrivals in one second after the recovery. */
  peakAfterPerSec: number;
  /** Share of the logical requests issued after the recovery that succeeded. */
  successAfter: number;
  /** Server arrivals per second, index = second since the start. */
  arrivalsPerSec: number[];
  /** Logical requests issued per second. */
  issuedPerSec: number[];
}

/** 503: what an unavailable or overloaded server answers; the default classification retries it. */
function unavailable(): Error {
  return Object.assign(new Error('HTTP 503 Service Unavailable'), { status: 503 });
}

/**
 * Runs the outage scenario for one variant. A second counts as back to normal when at least
 * 99 % of the logical requests issued in it succeed and the server receives at most 1.1× the
 * logical load; `recoverySec` is the time from the recovery to the first second from which
 * every second is normal.
 */
export async function outage(config: OutageConfig, variant: OutageVariant): Promise<OutageResult> {
  const { clients, beforeMs, outageMs, afterMs, capacityPerSec, seed, intervalMs = 1000 } = config;
  const outageStart = beforeMs;
  const outageEnd = beforeMs + outageMs;
  const endMs = outageEnd + afterMs;
  const seconds = Math.ceil(endMs / 1000);
  const clock = installVirtualClock();
  try {
    const net = seededRandom(streamSeed(seed, 0));
    const jitterRng = seededRandom(streamSeed(seed, 1));
    const phaseRng = seededRandom(streamSeed(seed, 2));
    const hop = () => clock.sleep(networkDelay(net));

    // Second-by-second counters, plus the outage totals. Arrivals after endMs (the drain)
    // still count in the totals they belong to but not in the per-second arrays.
    const arrivalsPerSec = new Array<number>(seconds).fill(0);
    const issuedPerSec = new Array<number>(seconds).fill(0);
    const succeededPerSec = new Array<number>(seconds).fill(0);
    let arrivalsInOutage = 0;
    let issuedInOutage = 0;

    // The server: down during the outage, otherwise a token bucket holding 100 ms of capacity.
    const burst = capacityPerSec / 10;
    let tokens = burst;
    let refilledAt = 0;
    const serve = (t: number): boolean => {
      const second = Math.floor(t / 1000);
      if (second < seconds) arrivalsPerSec[second] = (arrivalsPerSec[second] as number) + 1;
      if (t >= outageStart && t < outageEnd) {
        arrivalsInOutage++;
        return false;
      }
      tokens = Math.min(burst, tokens + ((t - refilledAt) * capacityPerSec) / 1000);
      refilledAt = t;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    };
    const attempt = async (): Promise<void> => {
      await hop();
      const ok = serve(clock.now());
      await hop();
      if (!ok) throw unavailable();
    };

    let pending = 0;
    let issuing = clients;
    const issue = (options: RetryOptions): void => {
      const t = clock.now();
      const second = Math.floor(t / 1000);
      issuedPerSec[second] = (issuedPerSec[second] as number) + 1;
      if (t >= outageStart && t < outageEnd) issuedInOutage++;
      pending++;
      retry(attempt, options).then(
        () => {
          pending--;
          succeededPerSec[second] = (succeededPerSec[second] as number) + 1;
        },
        () => {
          pending--;
        },
      );
    };
    for (let c = 0; c < clients; c++) {
      // Frozen, so retry() validates each client's options once (and to mirror real use).
      const options = Object.freeze(variant.clientOptions(jitterRng));
      const loop = async (): Promise<void> => {
        await clock.sleep(Math.floor(phaseRng() * intervalMs));
        while (clock.now() < endMs) {
          issue(options);
          await clock.sleep(intervalMs);
        }
        issuing--;
      };
      void loop();
    }
    await clock.runUntil(() => issuing === 0 && pending === 0);

    const normal = (s: number): boolean => {
      const issued = issuedPerSec[s] as number;
      return (succeededPerSec[s] as number) >= 0.99 * issued && (arrivalsPerSec[s] as number) <= 1.1 * issued;
    };
    // Skip the last second: requests issued in it may not have had time to be retried.
    const lastFull = seconds - 2;
    let firstNormal = lastFull + 1;
    while (firstNormal - 1 >= outageEnd / 1000 && normal(firstNormal - 1)) firstNormal--;
    const recoverySec = firstNormal > lastFull ? Number.POSITIVE_INFINITY : firstNormal - outageEnd / 1000;

    let peakAfterPerSec = 0;
    let issuedAfter = 0;
    let succeededAfter = 0;
    for (let s = outageEnd / 1000; s < seconds; s++) {
      peakAfterPerSec = Math.max(peakAfterPerSec, arrivalsPerSec[s] as number);
      issuedAfter += issuedPerSec[s] as number;
      succeededAfter += succeededPerSec[s] as number;
    }
    return {
      name: variant.name,
      amplification: arrivalsInOutage / issuedInOutage,
      recoverySec,
      peakAfterPerSec,
      successAfter: succeededAfter / issuedAfter,
      arrivalsPerSec,
      issuedPerSec,
    };
  } finally {
    clock.uninstall();
  }
}
