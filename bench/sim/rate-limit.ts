// Scenario: a 429 storm. A server admits `limitPerSecond` requests per one-second window and
// answers every other request 429 with `Retry-After` = the seconds left in the window. Calls
// arrive faster than that for a while, each with the defaults' full-jitter backoff. Without a
// gate, every call learns of the limit by sending a request and failing, and calls that arrive
// during a full window send one each; with one `createRetryAfterGate()` shared by the calls,
// the first 429 holds them all until the window ends, and lets them come back spread over the
// next. Measured: requests sent, 429 answers, and the time until the last call succeeded
// (time to drain).
import { type RetryGate, createRetryAfterGate, retry } from '../../src/index.js';
import { networkDelay, seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

export interface RateLimitConfig {
  /** Requests the server admits per one-second window. */
  readonly limitPerSecond: number;
  /** Calls arriving per second, evenly spread, for `arrivalMs`. */
  readonly arrivalsPerSecond: number;
  readonly arrivalMs: number;
  readonly seed: number;
}

export interface RateLimitResult {
  readonly requests: number;
  readonly tooMany: number;
  /** When the last call succeeded, in ms since the first arrived. */
  readonly drainMs: number;
}

function tooManyRequests(retryAfterSeconds: number): Error {
  return Object.assign(new Error('HTTP 429 Too Many Requests'), {
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

/** Runs the storm once, with a gate shared by every call or without one. */
export async function rateLimitStorm(config: RateLimitConfig, withGate: boolean): Promise<RateLimitResult> {
  const { limitPerSecond, arrivalsPerSecond, arrivalMs, seed } = config;
  const clock = installVirtualClock();
  try {
    const net = seededRandom(streamSeed(seed, 0));
    const rng = seededRandom(streamSeed(seed, 1));
    const gate: RetryGate | undefined = withGate ? createRetryAfterGate({ rng: seededRandom(streamSeed(seed, 2)) }) : undefined;
    const admitted = new Map<number, number>(); // window → requests admitted in it
    let requests = 0;
    let tooMany = 0;
    let lastDone = 0;
    const send = async (): Promise<string> => {
      await clock.sleep(networkDelay(net));
      requests++;
      const now = clock.now();
      const window = Math.floor(now / 1000);
      const used = admitted.get(window) ?? 0;
      if (used >= limitPerSecond) {
        tooMany++;
        const left = Math.ceil((1000 * (window + 1) - now) / 1000);
        await clock.sleep(networkDelay(net));
        throw tooManyRequests(left);
      }
      admitted.set(window, used + 1);
      await clock.sleep(networkDelay(net));
      return 'ok';
    };
    const options = Object.freeze({ rng, deadlineMs: 600_000, backoff: { initialDelayMs: 100, maxDelayMs: 10_000 }, gate });
    const calls = Math.round((arrivalsPerSecond * arrivalMs) / 1000);
    let done = 0;
    for (let c = 0; c < calls; c++) {
      void clock.sleep(Math.floor((c * 1000) / arrivalsPerSecond)).then(() =>
        retry(send, options).then(() => {
          done++;
          lastDone = clock.now();
        }),
      );
    }
    await clock.runUntil(() => done === calls);
    return { requests, tooMany, drainMs: lastDone };
  } finally {
    clock.uninstall();
  }
}

/** The storm without a gate and with one, in that order. */
export async function runRateLimit(config: RateLimitConfig): Promise<Array<RateLimitResult & { name: string }>> {
  return [
    { name: 'no gate: each call finds the limit itself', ...(await rateLimitStorm(config, false)) },
    { name: 'one createRetryAfterGate() shared by the calls', ...(await rateLimitStorm(config, true)) },
  ];
}

/** The markdown table of {@link runRateLimit}'s rows. */
export function rateLimitTable(config: RateLimitConfig, rows: ReadonlyArray<RateLimitResult & { name: string }>): string {
  const calls = Math.round((config.arrivalsPerSecond * config.arrivalMs) / 1000);
  const int = (n: number): string => n.toLocaleString('en-US');
  return [
    `| ${int(calls)} calls, ${config.arrivalsPerSecond}/s for ${config.arrivalMs / 1000} s; the server admits ${config.limitPerSecond}/s | requests sent | 429 answers | time to drain |`,
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.name} | ${int(r.requests)} | ${int(r.tooMany)} | ${(r.drainMs / 1000).toFixed(1)} s |`),
  ].join('\n');
}
