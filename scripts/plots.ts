// `npm run plots [-- OUT_DIR]`: draws each preset's delay schedule as an SVG chart (default
// into docs/). Per retry: the band from the shortest to the longest wait and the median over
// many seeded runs of computeDelay, the cap as a dashed line, and, shaded, the retries a
// median run never reaches because its waits alone pass the deadline. Deterministic: the same
// presets always give the same files, so the committed charts can be checked in CI.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../bench/sim/random.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, DEFAULT_DEADLINE_MS, type Jitter, type RetryOptions } from '../src/index.js';
import { gcs, iam } from '../src/google/index.js';
import { type RetryDelayStats, sampleSchedule } from './lib/delay-schedule.js';
import { renderChart } from './lib/svg-chart.js';

/** Runs sampled per chart; odd, so the median is a real sample. */
const RUNS = 10_001;
const SEED = 20_260_101;
/** Retries sampled; a chart shows up to three past the one a median run cannot reach. */
const MAX_RETRIES = 24;

interface Chart {
  file: string;
  /** How a user gets this policy. */
  label: string;
  options: Readonly<RetryOptions>;
}

const CHARTS: Chart[] = [
  { file: 'schedule-iam.svg', label: 'iam()', options: iam() },
  // The backoff is the same for every operation; an operation is required to build the preset.
  { file: 'schedule-gcs.svg', label: 'gcs()', options: gcs({ operation: 'objects.get' }) },
  { file: 'schedule-default.svg', label: 'retry() defaults', options: {} },
];

const seconds = (ms: number): string => `${Number((ms / 1000).toPrecision(4))} s`;

function jitterText(jitter: Jitter): string {
  if (jitter === 'none') return 'no jitter';
  if (jitter === 'full') return 'full jitter';
  if (jitter === 'equal') return 'equal jitter';
  if (jitter === 'decorrelated') return 'decorrelated jitter';
  return `+ random 0–${seconds(jitter.additiveMs)}${jitter.afterCap === true ? ', kept at the cap' : ''}`;
}

/** The first retry that a median run never makes: its waits alone reach the deadline. */
function firstUnreachable(stats: RetryDelayStats[], deadlineMs: number): number | undefined {
  return stats.find((row) => row.medianWaitedSoFar >= deadlineMs)?.retry;
}

function draw(chart: Chart): { svg: string; summary: string } {
  const policy: BackoffPolicy = { ...DEFAULT_BACKOFF, ...chart.options.backoff };
  const deadlineMs = chart.options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const sampled = sampleSchedule(policy, MAX_RETRIES, RUNS, seededRandom(SEED));
  const unreachable = firstUnreachable(sampled, deadlineMs);
  const shown = sampled.slice(0, unreachable === undefined ? MAX_RETRIES : Math.min(MAX_RETRIES, unreachable + 3));
  const last = shown.length;
  const s = (ms: number): number => ms / 1000;
  const svg = renderChart({
    title: `${chart.label}: ${seconds(policy.initialDelayMs)} × ${policy.multiplier} up to ${seconds(policy.maxDelayMs)}, ${jitterText(policy.jitter)}, deadline ${seconds(deadlineMs)}`,
    xLabel: 'retry number',
    yLabel: 'wait before the retry (s)',
    bands: [{ name: `shortest–longest of ${RUNS.toLocaleString('en-US')} runs`, points: shown.map((r) => [r.retry, s(r.min), s(r.max)]) }],
    series: [{ name: 'median', points: shown.map((r) => [r.retry, s(r.median)]) }],
    hLines: [{ y: s(policy.maxDelayMs), label: `cap ${seconds(policy.maxDelayMs)}` }],
    shadeX: unreachable === undefined ? [] : [{ from: unreachable - 0.5, to: last, label: 'past the deadline' }],
    xMin: 1,
    xMax: last,
  });
  const reach = unreachable === undefined ? 'never reaches the deadline' : `passes the deadline before retry ${unreachable}`;
  return { svg, summary: `${chart.label}: retries 1–${last}; a median run ${reach}` };
}

const outDir = process.argv[2] ?? 'docs';
mkdirSync(outDir, { recursive: true });
for (const chart of CHARTS) {
  const { svg, summary } = draw(chart);
  const path = join(outDir, chart.file);
  writeFileSync(path, svg);
  console.log(`wrote ${path} (${summary})`);
}
