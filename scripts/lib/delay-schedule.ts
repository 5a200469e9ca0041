// The spread of a backoff policy's waits, measured the way a fleet experiences them: many
// independent runs of the schedule, each with its own random draws from computeDelay.
import { type BackoffPolicy, computeDelay } from '../../src/index.js';

/** The waits before one retry across all sampled runs, in milliseconds. */
export interface RetryDelayStats {
  /** 1 for the first retry (its wait is `computeDelay(0, …)`). */
  retry: number;
  min: number;
  median: number;
  max: number;
  /** Median over runs of the total waited up to and including this retry. */
  medianWaitedSoFar: number;
}

/**
 * Runs the schedule `runs` times, `retries` retries each, drawing every jitter from `rng`, and
 * summarises each retry. `runs` must be odd so the median is one of the samples.
 *
 * @example
 * sampleSchedule({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'none' }, 3, 1, Math.random);
 * // [{ retry: 1, min: 1000, median: 1000, max: 1000, medianWaitedSoFar: 1000 }, … 2000 …, … 4000 …]
 */
export function sampleSchedule(policy: BackoffPolicy, retries: number, runs: number, rng: () => number): RetryDelayStats[] {
  if (!Number.isInteger(retries) || retries < 1) throw new RangeError(`retries must be an integer >= 1, got ${retries}`);
  if (!Number.isInteger(runs) || runs < 1 || runs % 2 === 0) throw new RangeError(`runs must be an odd integer >= 1, got ${runs}`);
  const delays = Array.from({ length: retries }, () => new Float64Array(runs));
  const waited = Array.from({ length: retries }, () => new Float64Array(runs));
  for (let run = 0; run < runs; run++) {
    let total = 0;
    let previous: number | undefined; // what a decorrelated jitter draws from
    for (let n = 0; n < retries; n++) {
      const delay = computeDelay(n, policy, rng, previous);
      previous = delay;
      total += delay;
      (delays[n] as Float64Array)[run] = delay;
      (waited[n] as Float64Array)[run] = total;
    }
  }
  const middle = (runs - 1) / 2;
  return delays.map((samples, n) => {
    samples.sort();
    const totals = (waited[n] as Float64Array).sort();
    return {
      retry: n + 1,
      min: samples[0] as number,
      median: samples[middle] as number,
      max: samples[runs - 1] as number,
      medianWaitedSoFar: totals[middle] as number,
    };
  });
}
