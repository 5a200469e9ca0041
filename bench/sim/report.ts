// Turns simulation results into the markdown tables `npm run sim` prints and the SVG charts
// it writes to docs/. Pure functions of the results: the same run gives the same files.
import { renderChart } from '../../scripts/lib/svg-chart.js';
import type { OutageResult } from './outage.js';

export interface ContentionRow {
  clients: number;
  /** Per jitter kind, in the column order of `kinds`. */
  results: Array<{ calls: number; timeMs: number }>;
}

export interface LockstepRow {
  name: string;
  peakPer100ms: number;
  meanPer100ms: number;
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const secs = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function contentionTables(kinds: string[], rows: ContentionRow[]): string {
  const calls = table(
    ['clients', ...kinds.map((k) => `${k}: calls`)],
    rows.map((r) => [String(r.clients), ...r.results.map((x) => int(x.calls))]),
  );
  const time = table(
    ['clients', ...kinds.map((k) => `${k}: time`)],
    rows.map((r) => [String(r.clients), ...r.results.map((x) => secs(x.timeMs))]),
  );
  return `${calls}\n\n${time}`;
}

export function outageTable(results: OutageResult[], afterSec: number): string {
  return table(
    ['clients configured with', 'load during the outage', 'time to recover', 'peak load after', 'success after'],
    results.map((r) => [
      r.name,
      `${r.amplification.toFixed(2)}× amplification`,
      Number.isFinite(r.recoverySec) ? `${r.recoverySec} s` : `> ${afterSec} s`,
      `${int(r.peakAfterPerSec)} req/s`,
      `${(r.successAfter * 100).toFixed(1)} %`,
    ]),
  );
}

export function lockstepTable(rows: LockstepRow[]): string {
  return table(
    ['jitter', 'peak arrivals per 100 ms', 'mean per 100 ms', 'peak ÷ mean'],
    rows.map((r) => [r.name, String(r.peakPer100ms), r.meanPer100ms.toFixed(2), (r.peakPer100ms / r.meanPer100ms).toFixed(1)]),
  );
}

export function contentionChart(kinds: string[], rows: ContentionRow[], what: 'calls' | 'time'): string {
  const series = kinds.map((name, i) => ({
    name,
    points: rows.map((r) => {
      const x = r.results[i] as { calls: number; timeMs: number };
      return [r.clients, what === 'calls' ? x.calls : x.timeMs / 1000] as const;
    }),
    // The default is drawn dashed over the kind it currently is, so both stay visible.
    dashed: name.startsWith('default'),
  }));
  return renderChart({
    title:
      what === 'calls'
        ? 'Contention: write attempts until every client has written once'
        : 'Contention: time until every client has written once',
    xLabel: 'clients competing for one row',
    yLabel: what === 'calls' ? 'write attempts (mean of trials)' : 'seconds (mean of trials, log scale)',
    series,
    yLog: what === 'time',
    xMin: rows[0]?.clients ?? 0,
    xMax: rows.at(-1)?.clients ?? 0,
  });
}

export function outageChart(results: OutageResult[], outageFromSec: number, outageToSec: number, logicalPerSec: number): string {
  return renderChart({
    title: 'Outage: requests reaching the server, 1,000 clients at 1 request/s each',
    xLabel: 'seconds',
    yLabel: 'requests per second at the server',
    series: results.map((r) => ({
      name: r.name,
      // The last second is partial (clients stop issuing); leave it out.
      points: r.arrivalsPerSec.slice(0, -1).map((n, s) => [s, n] as const),
    })),
    hLines: [{ y: logicalPerSec, label: 'logical load' }],
    shadeX: [{ from: outageFromSec, to: outageToSec, label: 'server down' }],
    xMin: 0,
    xMax: Math.max(...results.map((r) => r.arrivalsPerSec.length - 2)),
  });
}

export function lockstepChart(runs: Array<{ name: string; arrivalsPer100ms: number[] }>, fromSec: number, toSec: number): string {
  return renderChart({
    title: 'Retrying at a 32 s cap: arrivals at the server per 100 ms',
    xLabel: 'seconds into the outage',
    yLabel: 'arrivals per 100 ms',
    series: runs.map((r) => ({
      name: r.name,
      points: r.arrivalsPer100ms.slice(fromSec * 10, toSec * 10).map((n, i) => [fromSec + i / 10, n] as const),
    })),
    xMin: fromSec,
    xMax: toSec,
  });
}
