// `npm run sim [-- OUT_DIR]`: the fleet simulator. Runs three scenarios through the real retry()
// in virtual time, prints the results as markdown tables on stdout (progress goes to stderr)
// and writes the charts to docs/fleet-*.svg (or OUT_DIR). Reproducible: every run prints and draws
// the same bytes (test/sim.test.ts runs it twice, scaled down with SIM_SIZE=small, and compares).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BACKOFF, type Jitter, type RetryOptions, createAdaptiveThrottle, createRetryBudget } from '../../src/index.js';
import { CONTENTION_BASE_MS, CONTENTION_CAP_MS, contention } from './contention.js';
import { LOCKSTEP_BACKOFF, type LockstepResult, lockstep } from './lockstep.js';
import { type OutageConfig, type OutageResult, type OutageVariant, outage } from './outage.js';
import { runHedging } from './hedging.js';
import { LOADED, loadedHeadline, loadedTable, runLoaded } from './hedging-load.js';
import { BUDGET_CASES, budgetTable, runBudgets } from './budgets.js';
import { type RateLimitConfig, type RateLimitResult, rateLimitTable, runRateLimit } from './rate-limit.js';
import { type FleetGateConfig, fleetGateLine, runFleetGate } from './fleet-gate.js';
import { writeFleetDocs } from '../../scripts/fleet-docs.js';
import { seededRandom } from './random.js';
import { type ContentionRow, contentionChart, contentionTables, lockstepChart, lockstepTable, outageChart, outageTable } from './report.js';

const RANDOM_START = 20_150_304; // the AWS post's date; any fixed number would do
/** The same pipeline on small fleets, for the reproducibility test. */
const SMALL = process.env.SIM_SIZE === 'small';
/** Without an OUT_DIR the run also rewrites the generated parts of docs/fleet.md and the README. */
const intoDocs = process.argv[2] === undefined;
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
  // The AWS post's third kind: each wait uniform in [base, 3 × the previous one], capped.
  { name: 'decorrelated', jitter: 'decorrelated' },
  { name: `default (${JSON.stringify(DEFAULT_BACKOFF.jitter).replaceAll('"', '')})`, jitter: DEFAULT_BACKOFF.jitter },
];

async function runContention(): Promise<ContentionRow[]> {
  const rows: ContentionRow[] = [];
  for (const clients of CLIENTS) {
    const results = [];
    for (const kind of KINDS) {
      results.push(await contention(clients, kind.jitter, TRIALS, RANDOM_START + clients));
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
  seed: RANDOM_START,
};

function outageVariants(): OutageVariant[] {
  const throttleRng = seededRandom(RANDOM_START + 7);
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

const LOCKSTEP = { clients: SMALL ? 100 : 2000, outageMs: 600_000, measureFromMs: 120_000, seed: RANDOM_START };
const LOCKSTEP_KINDS: Array<{ name: string; jitter: Jitter; charted: boolean }> = [
  { name: 'none', jitter: 'none', charted: false },
  { name: "additive 1 s, truncated (Google's formula)", jitter: { additiveMs: 1000 }, charted: true },
  { name: 'additive 1 s, afterCap', jitter: { additiveMs: 1000, afterCap: true }, charted: true },
  { name: 'additive 16 s, afterCap', jitter: { additiveMs: 16_000, afterCap: true }, charted: false },
  { name: 'equal', jitter: 'equal', charted: false },
  { name: 'full', jitter: 'full', charted: true },
  { name: 'decorrelated', jitter: 'decorrelated', charted: false },
];

async function runLockstep(): Promise<Array<LockstepResult & { name: string; charted: boolean }>> {
  const results = [];
  for (const kind of LOCKSTEP_KINDS) {
    results.push({ name: kind.name, charted: kind.charted, ...(await lockstep(LOCKSTEP, kind.jitter)) });
    progress(`lockstep: ${kind.name}`);
  }
  return results;
}

// --- Scenario: a 429 storm, with and without a Retry-After gate ------------------------------

type RateLimitRow = RateLimitResult & { name: string };
const RATE_LIMIT: RateLimitConfig = { limitPerSecond: 20, arrivalsPerSecond: 40, arrivalMs: SMALL ? 2000 : 10_000, seed: RANDOM_START };

// --- Scenario: the same storm on a fleet, a gate per process or one shared (tenacious/redis) --

const FLEET_GATE: FleetGateConfig = {
  processes: SMALL ? 10 : 50,
  callsPerSecond: 2,
  arrivalMs: SMALL ? 2000 : 10_000,
  limitPerSecond: SMALL ? 10 : 50,
  seed: RANDOM_START,
};

// --- Report --------------------------------------------------------------------------------

const contentionRows = await runContention();
const outageResults = await runOutage();
const lockstepResults = await runLockstep();
const hedgingRun = await runHedging(
  RANDOM_START,
  progress,
  SMALL ? { seeds: 2, spareRequests: 2000, overloadedRequests: 1000 } : undefined,
);
const loadedSize = SMALL
  ? { seeds: 2, requests: 2000, utilisations: [0.5] }
  : { seeds: LOADED.seeds, requests: LOADED.requests, utilisations: LOADED.utilisations };
const loadedRows = await runLoaded(RANDOM_START, progress, loadedSize);
const budgetRows = await runBudgets(SMALL ? 20 : 100, RANDOM_START, progress, SMALL ? BUDGET_CASES.slice(0, 2) : BUDGET_CASES);
const rateLimitRows = await runRateLimit(RATE_LIMIT);
progress('rate limit: a 429 storm with and without a gate');
const fleetGateRun = await runFleetGate(FLEET_GATE);
progress(`rate limit: ${FLEET_GATE.processes} processes, a gate each or one shared`);
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

// --- Generated parts of the docs: every number docs/fleet.md and the README quote --------------

const last = contentionRows.at(-1) as ContentionRow;
const cont = (name: string) => last.results[kindNames.indexOf(name)] as { calls: number; timeMs: number };
type Cont = { calls: number; timeMs: number };
const [cNone, cFull, cEqual, cAdd] = ['none', 'full', 'equal', "additive (Google's formula)"].map(cont) as [Cont, Cont, Cont, Cont];
const secs = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const fewer = (a: number, b: number): string => `${Math.round((1 - a / b) * 100)} %`;
const byName = (name: string) => outageResults.find((r) => r.name === name) as OutageResult;
const amp = (name: string): string => `${byName(name).amplification.toFixed(2)}×`;
const lock = (name: string) => lockstepResults.find((r) => r.name === name) as LockstepResult & { name: string };
const hedgingRunsText = `${SMALL ? 2 : 5} runs (random starts ${RANDOM_START} to ${RANDOM_START + (SMALL ? 1 : 4)})`;
const fragments: Record<string, string> = {
  'contention-table': [
    `| ${last.clients} clients | none | full | equal | additive (Google's formula) |`,
    '| --- | --- | --- | --- | --- |',
    `| write attempts | ${[cNone, cFull, cEqual, cAdd].map((c) => int(c.calls)).join(' | ')} |`,
    `| time to completion | ${[cNone, cFull, cEqual, cAdd].map((c) => secs(c.timeMs)).join(' | ')} |`,
  ].join('\n'),
  'contention-none': `${int(cNone.calls)} calls in ${secs(cNone.timeMs)}`,
  'contention-full': `${int(cFull.calls)} calls in ${secs(cFull.timeMs)}`,
  'contention-fewer': `${fewer(cFull.calls, cAdd.calls)} fewer writes than Google's formula (${fewer(cFull.calls, cNone.calls)} fewer than no jitter) and finishes in ${secs(cFull.timeMs)} instead of ${secs(cAdd.timeMs)} (${secs(cNone.timeMs)} without jitter)`,
  'contention-fewer-short': fewer(cFull.calls, cAdd.calls),
  'outage-table': outageTable(outageResults, OUTAGE.afterMs / 1000),
  'outage-defaults': amp('defaults (no attempt limit)'),
  'outage-defaults-budget': amp('defaults + budget per client'),
  'lockstep-table': lockstepTable(lockstepResults),
  'lockstep-ratio': `${(lock("additive 1 s, truncated (Google's formula)").peakPer100ms / lock('full').peakPer100ms).toFixed(1)}×`,
  'lockstep-aftercap': fewer(lock('additive 1 s, afterCap').peakPer100ms, lock("additive 1 s, truncated (Google's formula)").peakPer100ms),
  'hedging-runs': hedgingRunsText,
  'hedging-spare': hedgingRun.spareTable,
  'hedging-overloaded': hedgingRun.overloadedTable,
  'hedging-loaded': loadedTable(loadedRows),
  'hedging-lines': ['```text', hedgingRun.headline, loadedHeadline(loadedRows, 0.5), '```'].join('\n'),
  'hedging-spare-p999': `${Math.round(hedgingRun.baselineP999)} ms to ${Math.round(hedgingRun.hedgedP999)} ms`,
  'hedging-loaded-50': loadedHeadline(loadedRows, 0.5).replace(/^hedging at /, ''),
  'budget-table': budgetTable(budgetRows),
  'gate-table': rateLimitTable(RATE_LIMIT, rateLimitRows),
  'gate-fewer': `${fewer((rateLimitRows[1] as RateLimitRow).requests, (rateLimitRows[0] as RateLimitRow).requests)} fewer requests`,
  'gate-fleet': ['```text', fleetGateLine(FLEET_GATE, fleetGateRun), '```'].join('\n'),
};
writeFileSync(docs('fleet-sim.json'), `${JSON.stringify(fragments, null, 2)}\n`);
if (intoDocs && !SMALL) {
  writeFleetDocs(fragments);
  progress('generated parts of docs/fleet.md and the README rewritten');
}

const out = [
  '# Fleet simulation',
  '',
  `Random start ${RANDOM_START}. Every number comes from the real \`retry()\` driven in virtual time (@sinonjs/fake-timers).`,
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
  `## Hedging, unlimited servers (the upper bound): ${hedgingRunsText}`,
  '',
  'Every copy is served on its own: a hedge costs one request and nothing else, and latency does not depend on load.',
  '',
  fragments['hedging-spare'],
  '',
  '**Overloaded** (9 workers behind a queue of 200, 500 requests/s for about 440/s; a cancelled copy leaves the queue, one in service runs to the end):',
  '',
  fragments['hedging-overloaded'],
  '',
  `## Hedging under load: ${LOADED.replicas} replicas × ${LOADED.workers} workers, FIFO queues, ${loadedSize.seeds} runs × ${loadedSize.requests.toLocaleString('en-US')} requests`,
  '',
  'Poisson arrivals; load = arrival rate × mean service time ÷ workers, without hedging. The hedge goes to another replica.',
  'A cell is the median over the runs (range in brackets). Requests sent and server work: relative to the requests, and to the service time of their first copies.',
  '',
  fragments['hedging-loaded'],
  '',
  `## Budgets across rates and outage lengths: ${SMALL ? 20 : 100} logical requests/s in all, retry() defaults + a budget per client`,
  '',
  'Formula: 1 + (maxTokens/2 − 1) ÷ requests per client during the outage. Ratio 10 %: a retry only while retries ≤ 10 % of the requests of the last 60 s (the SRE book).',
  '',
  fragments['budget-table'],
  '',
  '## A 429 storm, with and without a Retry-After gate',
  '',
  'The server admits 20 requests per one-second window and answers the rest 429 with Retry-After = the seconds left in it.',
  '',
  fragments['gate-table'],
  '',
  `## The storm on a fleet: ${FLEET_GATE.processes} processes × ${FLEET_GATE.callsPerSecond} calls/s for ${FLEET_GATE.arrivalMs / 1000} s; the API admits ${FLEET_GATE.limitPerSecond}/s`,
  '',
  'A gate per process, or one shared by the fleet (tenacious/redis; a pause reaches the others after two network hops).',
  '',
  fragments['gate-fleet'],
  '',
  fragments['hedging-lines'],
  '',
];
process.stdout.write(`${out.join('\n')}\n`);
progress('done');
