/**
 * `tenacious schedule`: the delays a policy waits before each retry, as a table and a small
 * text chart. Pure: the numbers come from `scheduleRows` (core/schedule-rows.ts), the text from them.
 */
import { type ScheduleRow, scheduleRows } from '../core/schedule-rows.js';
import type { AttemptTimeoutGrowth, BackoffPolicy, Jitter } from '../index.js';
import { formatDuration } from './duration.js';

// The rows are computed in the core, where tenacious/testing's scheduleOf reads them too.
export { scheduleRows, type ScheduleRow } from '../core/schedule-rows.js';

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
