/**
 * Client-side adaptive throttling, from the "Handling Overload" chapter of Google's SRE book:
 * a client that sees the server reject most of its requests starts rejecting some of them
 * itself, before they cost the server anything, in proportion to how badly things go.
 */
import { FUNCTION, type FieldRules, atLeast, drawFrom, isFiniteNumber, readChecked, wholeAtLeast } from '../util/check.js';
import { ThrottledError } from '../errors.js';
import type { AttemptThrottle, RetryClock } from '../types.js';
import { CLOCK_RULE, systemClock } from '../runtime/clock.js';

/**
 * Options of {@link createAdaptiveThrottle}.
 *
 * @example
 * // Reacts within seconds rather than minutes, for a client with a few requests per second.
 * const throttle = createAdaptiveThrottle({ k: 2, windowMs: 10_000 });
 */
export interface AdaptiveThrottleOptions {
  /**
   * How many requests per accepted one the client still sends before it throttles. At least 1;
   * default 2 (the SRE book's choice). Lower is more aggressive, higher lets more through.
   */
  k?: number;
  /** How far back the counts look, in milliseconds. Default 120 000 (two minutes). */
  windowMs?: number;
  /**
   * Requests the window must hold before the throttle may reject any: below it the counts are
   * too few to tell an overloaded server from a few unlucky failures. A safe integer >= 0;
   * default 10. 0 applies the formula from the first request, as the SRE book writes it.
   */
  minRequests?: number;
  /** Source of randomness in [0, 1) for the rejection draw. Default `Math.random`. */
  rng?: () => number;
  /** The clock the window runs on. Default `systemClock` (which follows fake timers a test installs). */
  clock?: RetryClock;
}

/**
 * An {@link AttemptThrottle} whose counts can be read, e.g. for metrics or tests.
 *
 * @example
 * const throttle = createAdaptiveThrottle();
 * setInterval(() => metrics.gauge('search.client_rejection', throttle.rejectionProbability()), 10_000);
 */
export interface AdaptiveThrottle extends AttemptThrottle {
  /**
   * Attempts in the window: those rejected locally, and those admitted whose outcome was
   * recorded (an attempt the caller aborted or abandoned is not counted).
   */
  readonly requests: number;
  /** Attempts the server accepted in the window (anything but a transient failure). */
  readonly accepts: number;
  /**
   * `max(0, (requests − k·accepts) / (requests + 1))` over the window, now; 0 while the window
   * holds fewer than `minRequests` requests.
   */
  rejectionProbability(): number;
}

/**
 * The window is kept as this many slices of `windowMs / SLICES`: constant memory and time per
 * event at any request rate. An event leaves the count between `windowMs − windowMs/SLICES`
 * and `windowMs` after it happened.
 */
const SLICES = 60;

/**
 * The probability with which the throttle rejects the next request, from the counts of its
 * window: `max(0, (requests − k·accepts) / (requests + 1))`, or 0 while `requests` is below
 * `minRequests`. Pure, so it can be checked on its own.
 *
 * @example
 * throttleProbability(10, 3, 2, 5); // (10 − 6) / 11
 * throttleProbability(2, 0, 2, 20); // 0: two failures are no sample
 */
export function throttleProbability(requests: number, accepts: number, k: number, minRequests: number): number {
  // The SRE book's formula is meant for a sample of traffic. Without a minimum, a quiet process
  // rejects its next attempt with probability 1/2 after one failure and 2/3 after two, and the
  // rejection itself counts as a request: a blip makes it throttle itself.
  if (requests < minRequests) return 0;
  return Math.max((requests - k * accepts) / (requests + 1), 0);
}

/**
 * Creates the SRE book's client-side adaptive throttle. Give one to every call to a server
 * (`retry(fn, { throttle })`). Before each attempt it rejects the attempt locally with
 * probability
 *
 *     max(0, (requests − k · accepts) / (requests + 1))
 *
 * where `requests` counts the attempts of the last `windowMs` (rejected ones too; an admitted
 * one once its outcome is known, so an attempt the caller aborted is not counted) and
 * `accepts` those the server accepted (anything but a transient failure). While the server
 * accepts everything the probability is 0; when it rejects everything, the client sends only
 * about `k` times what gets accepted, so a dead backend receives a trickle instead of the full
 * load and every retry on top. A rejected attempt fails the call with {@link ThrottledError},
 * which is not retried. Nothing is rejected while the window holds fewer than `minRequests`
 * requests (default 10): a quiet process that sees two failures has no sample to judge by.
 *
 * It is made for clients that send many requests per second. Rejected requests count as
 * requests and never as accepts, so after an outage the throttle needs about a window's worth
 * of successes to forget it: at one request per second with the default two-minute window,
 * `npm run sim` measured more than two minutes of needless rejections after the server came
 * back. For low-rate clients prefer a retry budget, or a shorter window.
 *
 * The window runs on the `clock` option (default the system clock, as `retry()`'s, which
 * follows fake timers in tests); pass `rng` to make the draws reproducible.
 *
 * Throws a `RangeError`/`TypeError` naming the option for `k` below 1 or not finite,
 * `windowMs` not a finite number > 0, `minRequests` not a safe integer >= 0, `rng` not a
 * function, or an unknown option.
 *
 * @example
 * const throttle = createAdaptiveThrottle(); // one per backend, shared by every call to it
 * const data = await retry(() => fetchReport(id), { throttle, maxAttempts: 3 });
 */
export function createAdaptiveThrottle(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle {
  const { k, windowMs, minRequests, rng, clock } = readThrottleOptions(options);
  const sliceMs = windowMs / SLICES;
  const sliceRequests = new Array<number>(SLICES).fill(0);
  const sliceAccepts = new Array<number>(SLICES).fill(0);
  let requests = 0;
  let accepts = 0;
  /** Absolute index of the newest slice; set at first use, so creating one costs no clock read. */
  let newest = Number.NEGATIVE_INFINITY;

  /** Moves the window to the present, forgetting the slices that fell out of it. */
  function advance(): number {
    const current = Math.floor(clock.now() / sliceMs);
    if (current === newest) return current % SLICES;
    // Stryker disable next-line EqualityOperator: equivalent: an equal index returned above, and a gap of exactly SLICES clears every slot in the loop as the reset does
    if (current > newest && current - newest < SLICES) {
      for (let slice = newest + 1; slice <= current; slice++) {
        const slot = slice % SLICES;
        requests -= sliceRequests[slot] as number;
        accepts -= sliceAccepts[slot] as number;
        sliceRequests[slot] = 0;
        sliceAccepts[slot] = 0;
      }
    } else {
      // The whole window has passed, or the clock went back (performance.now() never does;
      // a fake clock being installed does): what was counted belongs to another time line.
      sliceRequests.fill(0);
      sliceAccepts.fill(0);
      requests = 0;
      accepts = 0;
    }
    newest = current;
    return current % SLICES;
  }

  function probability(): number {
    return throttleProbability(requests, accepts, k, minRequests);
  }

  return {
    get requests() {
      advance();
      return requests;
    },
    get accepts() {
      advance();
      return accepts;
    },
    rejectionProbability(): number {
      advance();
      return probability();
    },
    admit(): boolean {
      const slot = advance();
      // The probability is computed before this request counts, as the book's formula reads:
      // the first request after a quiet spell always goes through.
      const p = probability();
      if (p === 0) return true; // no draw: keeps the rng sequence tied to throttled moments only
      if (drawFrom(rng, 'createAdaptiveThrottle: options.rng') >= p) return true;
      // A request rejected here counts at once; an admitted one counts when its outcome is
      // recorded (see record).
      requests++;
      sliceRequests[slot] = (sliceRequests[slot] as number) + 1;
      return false;
    },
    record(accepted: boolean): void {
      // An admitted attempt counts as a request only once it has an outcome: one the caller
      // aborted, or abandoned at its deadline, is never recorded, and says nothing about the
      // server (a typeahead cancelling stale searches must not throttle itself).
      const slot = advance();
      requests++;
      sliceRequests[slot] = (sliceRequests[slot] as number) + 1;
      if (!accepted) return;
      accepts++;
      sliceAccepts[slot] = (sliceAccepts[slot] as number) + 1;
    },
    error(): Error {
      advance();
      return new ThrottledError(probability(), requests, accepts);
    },
  };
}

/**
 * Far below the 100 calls circuit breakers wait for (Polly's MinimumThroughput,
 * resilience4j's minimumNumberOfCalls): a breaker's verdict stops all traffic, this one sheds
 * a share of it, and it is counted per process. At one request per second 100 would take most
 * of the default window to reach, and a 10 s window never (`npm run sim`: the outage's 10 s
 * row went from 0.31x to 2.97x, no better than no throttle). At 10, a server still accepting
 * 80 % looks overloaded (fewer than half accepted) by chance 0.6 % of the time, against 10 %
 * at 3 requests, and the 10 s row changed from 0.31x to 0.36x while recovering in 10 s instead of 60 s.
 */
const DEFAULT_MIN_REQUESTS = 10;

const RULES: FieldRules = {
  // k < 1 would throttle a perfectly healthy server (requests − k·requests > 0), and the
  // rejected requests then keep the rejection going: it could never recover.
  k: /* @__PURE__ */ atLeast(1),
  windowMs: { ok: (v) => isFiniteNumber(v) && v > 0, rule: 'be a finite number > 0', range: true },
  minRequests: /* @__PURE__ */ wholeAtLeast(0),
  rng: FUNCTION,
  clock: CLOCK_RULE,
};

function readThrottleOptions(options: unknown): Required<AdaptiveThrottleOptions> {
  const {
    k = 2,
    windowMs = 120_000,
    minRequests = DEFAULT_MIN_REQUESTS,
    rng = Math.random,
    clock = systemClock,
  } = readChecked('createAdaptiveThrottle', options, RULES) as AdaptiveThrottleOptions;
  return { k, windowMs, minRequests, rng, clock };
}
