// Seeds, counts and replay lines. A failing run prints ONE line that reproduces it:
//   SIM_SEED=<seed> SIM_PATH=<fast-check path> npx vitest run test/sim
// and the shrunk world. SIM_SEED and SIM_PATH replay exactly (every rng of a world, Math.random
// included, draws from the world's own numbers). SIM_RUNS sets how many worlds a property runs;
// SIM_FETCH_RUNS the retryFetch worlds (fetch-sim.test.ts); SIM_SURVEY=1 keeps going after a failure and prints one replay line per broken invariant.
import fc from 'fast-check';

/** The env of the simulation, read once. */
export const SIM = {
  seed: process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED),
  path: process.env.SIM_PATH,
  runs: (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name])),
  survey: process.env.SIM_SURVEY === '1',
};

/** Calls simulated in this process, by kind: what `npm run fuzz` quotes. */
export const simulated = { calls: 0, worlds: 0 };

export function replayLine(seed: number, path: string, file: string): string {
  return `SIM_SEED=${seed} SIM_PATH=${path} npx vitest run ${file}`;
}

function shown(value: unknown): string {
  const text = fc.stringify(value);
  return text.length > 6000 ? `${text.slice(0, 6000)}… (${text.length} characters)` : text;
}

/**
 * Runs `property` over `arb` (numRuns `defaultRuns`, or the env var `runsEnv`), and on a failure throws one
 * error: the replay line, the violations and the shrunk case. With SIM_SURVEY=1 it goes on after
 * failures, and throws at the end with one replay line (seed and the run's index) per invariant.
 */
export async function simulate<T>(
  arb: fc.Arbitrary<T>,
  run: (value: T) => Promise<{ invariant: string; detail: string }[]>,
  { defaultRuns, runsEnv, file }: { defaultRuns: number; runsEnv: string; file: string },
): Promise<void> {
  const seed = SIM.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  const numRuns = SIM.path === undefined ? (SIM.runs(runsEnv) ?? defaultRuns) : 1;
  if (SIM.survey) {
    const found = new Map<string, { index: number; detail: string; count: number }>();
    let index = 0;
    const details = await fc.check(
      fc.asyncProperty(arb, async (value) => {
        const broken = await run(value);
        for (const v of broken) {
          const seen = found.get(v.invariant);
          if (seen) seen.count += 1;
          else found.set(v.invariant, { index, detail: v.detail, count: 1 });
        }
        index += 1;
      }),
      { seed, numRuns },
    );
    if (details.failed) throw details.errorInstance;
    if (found.size > 0) {
      const lines = [...found].map(([name, f]) => `${name} (${f.count}x): ${f.detail}\n  ${replayLine(seed, String(f.index), file)}`);
      throw new Error(`survey of ${numRuns} worlds, seed ${seed}:\n${lines.join('\n')}`);
    }
    return;
  }
  const details = await fc.check(
    fc.asyncProperty(arb, async (value) => {
      const broken = await run(value);
      if (broken.length > 0) throw new Error(broken.map((v) => `${v.invariant}: ${v.detail}`).join('\n'));
    }),
    // Shrinking reruns whole worlds: bounded, so that a failing `npm test` still ends in time.
    {
      seed,
      numRuns,
      ...(SIM.runs(runsEnv) === undefined ? { interruptAfterTimeLimit: 45_000 } : {}),
      ...(SIM.path === undefined ? {} : { path: SIM.path }),
    },
  );
  if (!details.failed) return;
  const path = details.counterexamplePath ?? SIM.path ?? '0';
  const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`${replayLine(details.seed, path, file)}\n${message}\nshrunk case: ${shown(details.counterexample?.[0])}`);
}
