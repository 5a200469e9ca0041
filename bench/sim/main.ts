// `npm run sim [-- OUT_DIR]`: the fleet simulator. Runs three scenarios through the real retry()
// in virtual time, prints the results as markdown tables on stdout (progress goes to stderr)
// and writes the charts to docs/fleet-*.svg (or OUT_DIR). Seeded: every run prints and draws
// the same bytes (test/sim.test.ts runs it twice, scaled down with SIM_SIZE=small, and compares).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BACKOFF, type Jitter, type RetryOptions, createAdaptiveThrottle, createRetryBudget } from '../../src/index.js';
import { CONTENTION_BASE_MS, CONTENTION_CAP_MS, contention } from './contention.js';
import { LOCKSTEP_BACKOFF, type LockstepResult, lockstep } from './lockstep.js';
import { type OutageConfig, type OutageResult, type OutageVariant, outage } from './outage.js';
import { runHedging } from './hedging.js';
import { seededRandom } from './random.js';
import { type ContentionRow, contentionChart, contentionTables, lockstepChart, lockstepTable, outageChart, outageTable } from './report.js';

const SEED = 20_150_304; // the AWS post's date; any fixed number would do
/** The same pipeline on small fleets, for the reproducibility test. */
const SMALL = process.env.SIM_SIZE === 'small';
const outDir = process.argv[2] ?? fileURLToPath(new URL('../../docs/', import.meta.url));
mkdirSync(outDir, { recursive: true });
const docs = (file: string): string => join(outDir, file);
const started = performance.now();
const progress = (message: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
};

// --- Scenario 1: contention ----------------------------------------------------------------

const CLIENTS = SMALL ? [10, 20] : [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
const TRIALS = SMALL ? 2 : 20;
/** retry()'s first delay; the AWS model's base 5 ms with its n starting at 1 (see contention.ts). */
const FIRST_DELAY_MS = 2 * CONTENTION_BASE_MS;
const KINDS: Array<{ name: string; jitter: Jitter }> = [
  { name: 'none', jitter: 'none' },
  { name: 'full', jitter: 'full' },
  { name: 'equal', jitter: 'equal' },
  // Google's formula adds up to one first delay at random (1 s on a 1 s base): scaled the same way.
  { name: "additive (Google's formula)", jitter: { additiveMs: FIRST_DELAY_MS } },
  { name: `default (${JSON.stringify(DEFAULT_BACKOFF.jitter).replaceAll('"', '')})`, jitter: DEFAULT_BACKOFF.jitter },
];

async function runContention(): Promise<ContentionRow[]> {
  const rows: ContentionRow[] = [];
  for (const clients of CLIENTS) {
    const results = [];
    for (const kind of KINDS) {
      results.push(await contention(clients, kind.jitter, TRIALS, SEED + clients));
    }
    rows.push({ clients, results });
    progress(`contention: ${clients} clients, ${KINDS.length} jitter kinds × ${TRIALS} trials`);
  }
  return rows;
}

// --- Scenario 2: outage --------------------------------------------------------------------

const OUTAGE: OutageConfig = {
  clients: SMALL ? 50 : 1000,
  beforeMs: 30_000,
  outageMs: 60_000,
  afterMs: 120_000,
  capacityPerSec: SMALL ? 60 : 1200,
  seed: SEED,
};

function outageVariants(): OutageVariant[] {
  const throttleRng = seededRandom(SEED + 7);
  const sharedBudget = createRetryBudget();
  const three = (rng: () => number): RetryOptions => ({ maxAttempts: 3, rng });
  return [
    { name: 'maxAttempts 3, no budget', clientOptions: three },
    { name: 'maxAttempts 3 + budget per client', clientOptions: (rng) => ({ ...three(rng), budget: createRetryBudget() }) },
    { name: 'maxAttempts 3 + one budget for all', clientOptions: (rng) => ({ ...three(rng), budget: sharedBudget }) },
    {
      name: 'maxAttempts 3 + throttle per client',
      clientOptions: (rng) => ({ ...three(rng), throttle: createAdaptiveThrottle({ rng: throttleRng }) }),
    },
    {
      name: 'maxAttempts 3 + throttle, 10 s window',
      clientOptions: (rng) => ({ ...three(rng), throttle: createAdaptiveThrottle({ windowMs: 10_000, rng: throttleRng }) }),
    },
    { name: 'defaults (no attempt limit)', clientOptions: (rng) => ({ rng }) },
    { name: 'defaults + budget per client', clientOptions: (rng) => ({ rng, budget: createRetryBudget() }) },
  ];
}

async function runOutage(): Promise<OutageResult[]> {
  const results: OutageResult[] = [];
  for (const variant of outageVariants()) {
    results.push(await outage(OUTAGE, variant));
    progress(`outage: ${variant.name}`);
  }
  return results;
}

// --- Scenario 3: synchronisation at the cap ------------------------------------------------

const LOCKSTEP = { clients: SMALL ? 100 : 2000, outageMs: 600_000, measureFromMs: 120_000, seed: SEED };
const LOCKSTEP_KINDS: Array<{ name: string; jitter: Jitter; charted: boolean }> = [
  { name: 'none', jitter: 'none', charted: false },
  { name: "additive 1 s, truncated (Google's formula)", jitter: { additiveMs: 1000 }, charted: true },
  { name: 'additive 1 s, afterCap', jitter: { additiveMs: 1000, afterCap: true }, charted: true },
  { name: 'additive 16 s, afterCap', jitter: { additiveMs: 16_000, afterCap: true }, charted: false },
  { name: 'equal', jitter: 'equal', charted: false },
  { name: 'full', jitter: 'full', charted: true },
];

async function runLockstep(): Promise<Array<LockstepResult & { name: string; charted: boolean }>> {
  const results = [];
  for (const kind of LOCKSTEP_KINDS) {
    results.push({ name: kind.name, charted: kind.charted, ...(await lockstep(LOCKSTEP, kind.jitter)) });
    progress(`lockstep: ${kind.name}`);
  }
  return results;
}

// --- Report --------------------------------------------------------------------------------

const contentionRows = await runContention();
const outageResults = await runOutage();
const lockstepResults = await runLockstep();
const hedgingRun = await runHedging(SEED, progress);
writeFileSync(docs('hedging-latency.svg'), hedgingRun.svg);

const kindNames = KINDS.map((k) => k.name);
writeFileSync(docs('fleet-contention-calls.svg'), contentionChart(kindNames, contentionRows, 'calls'));
writeFileSync(docs('fleet-contention-time.svg'), contentionChart(kindNames, contentionRows, 'time'));
const charted = new Set([
  'maxAttempts 3, no budget',
  'maxAttempts 3 + budget per client',
  'maxAttempts 3 + throttle per client',
  'defaults (no attempt limit)',
  'defaults + budget per client',
]);
writeFileSync(
  docs('fleet-outage-load.svg'),
  outageChart(
    outageResults.filter((r) => charted.has(r.name)),
    OUTAGE.beforeMs / 1000,
    (OUTAGE.beforeMs + OUTAGE.outageMs) / 1000,
    OUTAGE.clients,
  ),
);
writeFileSync(
  docs('fleet-lockstep.svg'),
  lockstepChart(
    lockstepResults.filter((r) => r.charted),
    500,
    564,
  ),
);
progress('charts written to docs/fleet-*.svg');

const out = [
  '# Fleet simulation',
  '',
  `Seed ${SEED}. Every number comes from the real \`retry()\` driven in virtual time (@sinonjs/fake-timers).`,
  '',
  `## Contention: ${CLIENTS[0]}…${CLIENTS.at(-1)} clients update one row (optimistic concurrency)`,
  '',
  `The AWS backoff simulator's model: read the version, write conditionally; a write fails if another landed since the read.`,
  `Every hop |Normal(10 ms, 2 ms)|; base ${CONTENTION_BASE_MS} ms, cap ${CONTENTION_CAP_MS / 1000} s; mean of ${TRIALS} trials.`,
  'Reference at 100 clients (AWS post): no jitter ≈ 1,850 calls / 63 s, full jitter ≈ 800 calls / 5 s.',
  '',
  contentionTables(kindNames, contentionRows),
  '',
  `## Outage: ${OUTAGE.clients.toLocaleString('en-US')} clients, 1 logical request/s each, server down ${OUTAGE.outageMs / 1000} s`,
  '',
  `Server capacity ${OUTAGE.capacityPerSec.toLocaleString('en-US')} requests/s (the excess gets a 503). Default backoff (1 s × 2 up to 32 s, full jitter).`,
  'Amplification = requests reaching the server during the outage ÷ logical requests issued during it.',
  'Recovered = from then on every second has ≥ 99 % of its logical requests succeed and ≤ 1.1× their number at the server.',
  '',
  outageTable(outageResults, OUTAGE.afterMs / 1000),
  '',
  `## Synchronisation at the cap: ${LOCKSTEP.clients.toLocaleString('en-US')} clients, ${LOCKSTEP.outageMs / 60_000}-minute outage`,
  '',
  `Backoff ${LOCKSTEP_BACKOFF.initialDelayMs / 1000} s × ${LOCKSTEP_BACKOFF.multiplier} up to ${LOCKSTEP_BACKOFF.maxDelayMs / 1000} s; arrivals counted from ${LOCKSTEP.measureFromMs / 1000} s (all clients at the cap).`,
  '',
  lockstepTable(lockstepResults),
  '',
  hedgingRun.markdown,
  '',
];
process.stdout.write(`${out.join('\n')}\n`);
progress('done');
