// Seeded randomness for the fleet simulator: every run with the same seed is the same run.

/** A uniform generator in [0, 1) from a 32-bit seed (mulberry32: small, fast, good enough for simulation). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A normal deviate by the Box–Muller transform (one of the pair is enough here). */
export function normal(rng: () => number, mean: number, sd: number): number {
  // 1 − u keeps the logarithm's argument in (0, 1].
  const u = 1 - rng();
  const v = rng();
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * One network hop of the AWS backoff simulator's model, |Normal(10 ms, 2 ms)|, rounded to the
 * whole millisecond that timers can express.
 */
export function networkDelay(rng: () => number): number {
  return Math.round(Math.abs(normal(rng, 10, 2)));
}

/** Derives independent streams (client jitter, network) from one trial seed. */
export function streamSeed(seed: number, stream: number): number {
  return Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35);
}
