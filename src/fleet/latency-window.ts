/**
 * The latency window behind adaptive hedging: the last `size` successful latencies, kept both
 * in arrival order (to know which one leaves next) and sorted (so a percentile is one array
 * read). Recording costs a binary search and a shift of at most `size` numbers, which for the
 * small windows hedging uses is cheaper than sorting a copy on every call.
 *
 * @internal
 */

/**
 * The nearest-rank percentile of an ascending array: the smallest value such that at least a
 * fraction `p` of the values are at or below it. `p` in (0, 1]; NaN for an empty array.
 */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  // The tiny epsilon keeps 0.95 × 100 (94.99999999999999 in floating point) at rank 95.
  const rank = Math.max(1, Math.ceil(p * sorted.length - 1e-9));
  return sorted[rank - 1] as number;
}

/** A fixed-size window of recent latencies. */
export interface LatencyWindow {
  /** Adds a latency; once full, the oldest one leaves. */
  record(latencyMs: number): void;
  /** {@link nearestRank} of the latencies in the window; NaN while it is empty. */
  percentile(p: number): number;
  /** How many latencies it holds, at most its size. */
  readonly count: number;
}

/** Index of the first element of `sorted` that is >= `value` (its length if none is). */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Creates an empty window of `size` latencies (an integer >= 1, checked by the caller). */
export function createLatencyWindow(size: number): LatencyWindow {
  const ring: number[] = [];
  const sorted: number[] = [];
  let next = 0;
  return {
    record(latencyMs) {
      if (ring.length === size) {
        const oldest = ring[next] as number;
        sorted.splice(lowerBound(sorted, oldest), 1);
        ring[next] = latencyMs;
        next = (next + 1) % size;
      } else {
        ring.push(latencyMs);
      }
      sorted.splice(lowerBound(sorted, latencyMs), 0, latencyMs);
    },
    percentile: (p) => nearestRank(sorted, p),
    get count() {
      return ring.length;
    },
  };
}
