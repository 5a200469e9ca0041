/**
 * `tenacious schedule`: the delays a policy waits before each retry, as a table and a small
 * text chart. Pure: the numbers come from `computeDelay`, the text from them.
 */
import { type AttemptTimeoutGrowth, type BackoffPolicy, type Jitter, computeDelay } from '../index.js';
import { formatDuration } from './duration.js';

/**
 * The waits before one retry, over every value the jitter can take.
 *
 * @example
 * const [first]: ScheduleRow[] = scheduleRows(policy, 1); // first.minMs, first.maxMs
 */
export interface ScheduleRow {
  /** 1 for the first retry (before attempt 2). */
  readonly retry: number;
  readonly minMs: number;
  readonly medianMs: number;
  readonly maxMs: number;
  /** Sum of the waits up to and including this one, at their shortest and longest. */
  readonly waitedMinMs: number;
  readonly waitedMaxMs: number;
}

const LOWEST = (): number => 0;
const MIDDLE = (): number => 0.5;
const HIGHEST = (): number => 1;

/**
 * One row per retry, `retries` rows. Exact, not sampled: for every jitter mode
 * `computeDelay` never decreases as the rng's value grows, so with the rng uniform on [0, 1]
 * the shortest wait is the delay at 0, the longest at 1 and the median at 0.5. The running
 * sums of the shortest and longest waits bound the total time spent waiting (the median of
 * a sum is not the sum of medians, so no such column is given). A decorrelated jitter draws
 * each wait from the previous one: its shortest and longest waits are exact (every draw at 0,
 * every draw at 1), but its "median" is the wait when every draw is 0.5, not the median.
 *
 * @example
 * scheduleRows({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 1000 } }, 2);
 * // [{ retry: 1, minMs: 1000, medianMs: 1500, maxMs: 2000, waitedMinMs: 1000, waitedMaxMs: 2000 },
 * //  { retry: 2, minMs: 2000, medianMs: 2500, maxMs: 3000, waitedMinMs: 3000, waitedMaxMs: 5000 }]
 */
export function scheduleRows(policy: BackoffPolicy, retries: number): ScheduleRow[] {
  const rows: ScheduleRow[] = [];
  let waitedMinMs = 0;
  let waitedMaxMs = 0;
  let minMs: number | undefined;
  let medianMs: number | undefined;
  let maxMs: number | undefined;
  for (let n = 0; n < retries; n++) {
    // Each chain carries its own previous wait, which only a decorrelated jitter reads.
    minMs = computeDelay(n, policy, LOWEST, minMs);
    medianMs = computeDelay(n, policy, MIDDLE, medianMs);
    maxMs = computeDelay(n, policy, HIGHEST, maxMs);
    waitedMinMs += minMs;
    waitedMaxMs += maxMs;
    rows.push({ retry: n + 1, minMs, medianMs, maxMs, waitedMinMs, waitedMaxMs });
  }
  return rows;
}

/**
 * What `renderSchedule` prints about.
 *
 * @example
 * const spec: ScheduleSpec = { backoff: DEFAULT_BACKOFF, deadlineMs: 120_000, attempts: 10, source: 'default policy' };
 */
export interface ScheduleSpec {
  readonly backoff: BackoffPolicy;
  readonly deadlineMs: number;
  /** Time limit of one attempt, named in the title when finite; a growing one by its three numbers. */
  readonly attemptTimeoutMs?: number | AttemptTimeoutGrowth;
  /** Attempts covered, the first included: `attempts - 1` rows. */
  readonly attempts: number;
  /** Where the policy came from, e.g. `'gcs preset'`. */
  readonly source: string;
}

const CHART_WIDTH = 32;

/**
 * The schedule as text: a title naming the policy, then per retry the shortest, median and
 * longest wait and the time waited so far, in seconds, with a bar from 0 to the cap
 * (`=` spans min–max, `o` marks the median) and a note where the deadline can cut it off.
 *
 * @example
 * process.stdout.write(renderSchedule({ backoff, deadlineMs: 600_000, attempts: 12, source: 'gcs preset' }));
 */
export function renderSchedule(spec: ScheduleSpec): string {
  const { backoff, deadlineMs } = spec;
  const rows = scheduleRows(backoff, spec.attempts - 1);
  const lines = [
    `${spec.source}: wait ${formatDuration(backoff.initialDelayMs)} x${backoff.multiplier} up to ${formatDuration(backoff.maxDelayMs)}, ` +
      `jitter ${jitterText(backoff.jitter)}, deadline ${Number.isFinite(deadlineMs) ? formatDuration(deadlineMs) : 'none'}` +
      timeoutText(spec.attemptTimeoutMs),
    'Seconds waited before each retry over the whole jitter range (exact), and in total so far',
    '(the time the attempts themselves take comes on top).',
    '',
    `${'retry'.padStart(5)} ${'min'.padStart(9)} ${'median'.padStart(9)} ${'max'.padStart(9)} ` +
      `${'total min'.padStart(11)} ${'total max'.padStart(11)}  0${' '.repeat(CHART_WIDTH)}${formatDuration(backoff.maxDelayMs)}`,
  ];
  for (const row of rows) {
    const numbers =
      `${String(row.retry).padStart(5)} ${seconds(row.minMs, 9)} ${seconds(row.medianMs, 9)} ${seconds(row.maxMs, 9)} ` +
      `${seconds(row.waitedMinMs, 11)} ${seconds(row.waitedMaxMs, 11)}`;
    const note = deadlineNote(row, deadlineMs);
    lines.push(`${numbers}  |${bar(row, backoff.maxDelayMs)}|${note === '' ? '' : `  ${note}`}`);
  }
  return `${lines.join('\n')}\n`;
}

function timeoutText(timeout: number | AttemptTimeoutGrowth | undefined): string {
  if (typeof timeout === 'object') {
    const max = Number.isFinite(timeout.maxMs) ? ` up to ${formatDuration(timeout.maxMs)}` : '';
    return `, attempt timeout ${formatDuration(timeout.initialMs)} x${timeout.multiplier}${max}`;
  }
  return Number.isFinite(timeout) ? `, attempt timeout ${formatDuration(timeout as number)}` : ''; // false for undefined too
}

function seconds(ms: number, width: number): string {
  return (ms / 1000).toFixed(3).padStart(width);
}

function jitterText(jitter: Jitter): string {
  if (typeof jitter === 'string') return jitter;
  return `additive:${formatDuration(jitter.additiveMs)}${jitter.afterCap === true ? ' (kept after the cap)' : ''}`;
}

/** `retry()` gives up instead of sleeping past the deadline, so late retries may never come. */
function deadlineNote(row: ScheduleRow, deadlineMs: number): string {
  if (row.waitedMinMs >= deadlineMs) return 'past the deadline: never reached';
  if (row.waitedMaxMs >= deadlineMs) return 'may pass the deadline';
  return '';
}

function bar(row: ScheduleRow, capMs: number): string {
  const cell = (ms: number): number => (capMs > 0 ? Math.min(CHART_WIDTH - 1, Math.floor((ms / capMs) * CHART_WIDTH)) : 0);
  const from = cell(row.minMs);
  const to = cell(row.maxMs);
  const median = cell(row.medianMs);
  let text = '';
  for (let i = 0; i < CHART_WIDTH; i++) text += i === median ? 'o' : i >= from && i <= to ? '=' : ' ';
  return text;
}
