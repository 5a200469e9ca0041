// Scenario 4, hedging: the Tail at Scale model. Requests go to a server whose latency is mostly
// fast with a rare long tail; the real hedge() runs in virtual time and the client-side
// latency of every request is recorded. Two servers: one with room to spare (every copy of a
// request is served independently, so a hedge only costs load) and one that is overloaded (a
// fixed pool of workers behind a bounded queue, so every extra copy slows everyone down and
// a full queue answers 503).
import { renderChart } from '../../scripts/lib/svg-chart.js';
import { type HedgeOptions, createHedger, createRetryBudget, hedge } from '../../src/index.js';
import { seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

/** The latency of one attempt at the server, in ms: what the output and the README state. */
export const TAIL_MODEL = {
  /** Share of attempts in the fast body. */
  fastShare: 0.99,
  /** Body: `fastBaseMs` + Exponential(mean `fastMeanMs`). */
  fastBaseMs: 8,
  fastMeanMs: 2,
  /** Tail: `slowBaseMs` + Exponential(mean `slowMeanMs`). */
  slowBaseMs: 500,
  slowMeanMs: 500,
} as const;

/** The model in words, for the printed output and the README. */
export const TAIL_MODEL_TEXT =
  `${TAIL_MODEL.fastShare * 100} % of attempts take ${TAIL_MODEL.fastBaseMs} ms + Exponential(mean ${TAIL_MODEL.fastMeanMs} ms), ` +
  `${Math.round((1 - TAIL_MODEL.fastShare) * 100)} % take ${TAIL_MODEL.slowBaseMs} ms + Exponential(mean ${TAIL_MODEL.slowMeanMs} ms), each attempt independently, rounded up to whole ms`;

/** One attempt's service time under {@link TAIL_MODEL}, in whole milliseconds (timers' unit). */
export function serviceTime(rng: () => number): number {
  const slow = rng() >= TAIL_MODEL.fastShare;
  const base = slow ? TAIL_MODEL.slowBaseMs : TAIL_MODEL.fastBaseMs;
  const mean = slow ? TAIL_MODEL.slowMeanMs : TAIL_MODEL.fastMeanMs;
  return Math.ceil(base - mean * Math.log(1 - rng()));
}

export interface HedgingConfig {
  /** Logical requests, one every `intervalMs`. */
  requests: number;
  intervalMs: number;
  seed: number;
  /** `undefined`: independent copies (room to spare). Otherwise a pool of workers behind a bounded queue. */
  server?: { workers: number; queueLimit: number };
}

/** One way of calling the server; `options` is called once per run (a hedger inside is shared by that run). */
export interface HedgingVariant {
  name: string;
  options: () => HedgeOptions;
}

export interface HedgingResult {
  name: string;
  /** Client-side latency of every successful request, ascending, in ms. */
  latencies: number[];
  /** Requests that failed (503 from a full queue, deadline). */
  failed: number;
  /** Attempts sent ÷ logical requests − 1. */
  extraLoad: number;
}

/** The nearest-rank percentile of an ascending array. */
export function percentileOf(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length - 1e-9) - 1)] ?? Number.NaN;
}

function unavailable(): Error {
  return Object.assign(new Error('HTTP 503 Service Unavailable'), { status: 503 });
}

/** Runs every request of `config` through `hedge()` with the variant's options. */
export async function hedging(config: HedgingConfig, variant: HedgingVariant): Promise<HedgingResult> {
  const clock = installVirtualClock();
  try {
    const service = seededRandom(streamSeed(config.seed, 0));
    const options = variant.options();
    const latencies: number[] = [];
    let attempts = 0;
    let failed = 0;
    let pending = 0;
    let issued = 0;

    // The overloaded server: `workers` requests in service, up to `queueLimit` waiting; a copy
    // cancelled while it waits leaves the queue, one in service runs to the end (the server
    // does not notice the client has gone).
    type Job = { start: () => void; cancelled: boolean };
    const queue: Job[] = [];
    let busy = 0;
    let waiting = 0;
    const next = (): void => {
      while (queue.length > 0) {
        const job = queue.shift() as Job;
        if (job.cancelled) continue;
        waiting--;
        return job.start();
      }
    };

    const attempt = ({ signal }: { signal: AbortSignal }): Promise<string> => {
      attempts++;
      const ms = serviceTime(service);
      return new Promise<string>((resolve, reject) => {
        const server = config.server;
        if (server === undefined) {
          const timer = setTimeout(() => resolve('ok'), ms);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
          return;
        }
        const job: Job = {
          cancelled: false,
          start: () => {
            busy++;
            setTimeout(() => {
              busy--;
              resolve('ok');
              next();
            }, ms);
          },
        };
        if (busy < server.workers) return job.start();
        if (waiting >= server.queueLimit) return reject(unavailable());
        queue.push(job);
        waiting++;
        signal.addEventListener('abort', () => {
          const at = queue.indexOf(job);
          if (at < 0) return; // already in service
          job.cancelled = true;
          waiting--;
          reject(signal.reason);
        });
      });
    };

    const issue = (): void => {
      const startedAt = clock.now();
      pending++;
      issued++;
      hedge(attempt, options).then(
        () => {
          pending--;
          latencies.push(clock.now() - startedAt);
        },
        () => {
          pending--;
          failed++;
        },
      );
    };
    const loop = async (): Promise<void> => {
      for (let i = 0; i < config.requests; i++) {
        issue();
        await clock.sleep(config.intervalMs);
      }
    };
    void loop();
    await clock.runUntil(() => issued === config.requests && pending === 0);
    latencies.sort((a, b) => a - b);
    return { name: variant.name, latencies, failed, extraLoad: attempts / config.requests - 1 };
  } finally {
    clock.uninstall();
  }
}

// --- The scenarios `npm run sim` runs, and their report ------------------------------------

/** Room to spare: 20 000 requests, one per ms, every copy served on its own. */
export const SPARE: Omit<HedgingConfig, 'seed'> = { requests: 20_000, intervalMs: 1 };
/** Overloaded: 9 workers serve about 440 requests/s (see MEAN_SERVICE_MS); 500/s arrive. */
export const OVERLOADED: Omit<HedgingConfig, 'seed'> = {
  requests: 10_000,
  intervalMs: 2,
  server: { workers: 9, queueLimit: 200 },
};
/** The fixed delay compared: about the body's p99.9, well below the tail. */
export const FIXED_DELAY_MS = 20;
const DEADLINE_MS = 10_000;

/** The mean of {@link serviceTime}: the model's mean, plus half a millisecond for rounding up. */
export const MEAN_SERVICE_MS =
  TAIL_MODEL.fastShare * (TAIL_MODEL.fastBaseMs + TAIL_MODEL.fastMeanMs) +
  (1 - TAIL_MODEL.fastShare) * (TAIL_MODEL.slowBaseMs + TAIL_MODEL.slowMeanMs) +
  0.5;

/** The variants, in table order; the first is the baseline and the third the headline. */
export function hedgingVariants(): HedgingVariant[] {
  return [
    { name: 'no hedging', options: () => ({ delayMs: 0, idempotent: false, deadlineMs: DEADLINE_MS }) },
    { name: `fixed delay ${FIXED_DELAY_MS} ms, no limit`, options: () => ({ delayMs: FIXED_DELAY_MS, deadlineMs: DEADLINE_MS }) },
    {
      name: 'adaptive p95, maxExtraLoad 5 %',
      options: () => ({ hedger: createHedger({ percentile: 0.95, maxExtraLoad: 0.05 }), deadlineMs: DEADLINE_MS }),
    },
    {
      name: `fixed delay ${FIXED_DELAY_MS} ms + retry budget`,
      options: () => ({ delayMs: FIXED_DELAY_MS, budget: createRetryBudget(), deadlineMs: DEADLINE_MS }),
    },
  ];
}

const ms = (sorted: readonly number[], q: number): string => String(percentileOf(sorted, q));
const pct = (x: number): string => (x * 100).toFixed(1);

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The one line the issue asks for: `hedging: p99.9 <A> ms -> <B> ms, extra load <C> %`. */
export function headline(baseline: HedgingResult, hedged: HedgingResult): string {
  return `hedging: p99.9 ${ms(baseline.latencies, 0.999)} ms -> ${ms(hedged.latencies, 0.999)} ms, extra load ${pct(hedged.extraLoad)} %`;
}

export function hedgingTable(results: HedgingResult[], requests: number): string {
  return table(
    ['client', 'p50', 'p99', 'p99.9', 'max', 'extra load', 'failed'],
    results.map((r) => [
      r.name,
      `${ms(r.latencies, 0.5)} ms`,
      `${ms(r.latencies, 0.99)} ms`,
      `${ms(r.latencies, 0.999)} ms`,
      `${r.latencies.at(-1) ?? 0} ms`,
      `${pct(r.extraLoad)} %`,
      `${pct(r.failed / requests)} %`,
    ]),
  );
}

/** x = the number of nines of a percentile: 1 is p90, 2 p99, 3 p99.9. */
function percentileLabel(nines: number): string {
  const p = 100 * (1 - 10 ** -nines);
  return `p${Number(p.toPrecision(Math.max(2, Math.ceil(nines) + 1)))}`;
}

/** The latency at every percentile, with and without hedging, as an SVG chart. */
export function hedgingChart(results: HedgingResult[]): string {
  const maxNines = 4;
  const steps = maxNines * 50;
  return renderChart({
    title: 'Client latency by percentile, 20,000 requests to a server with a 1 % slow tail',
    xLabel: 'percentile',
    yLabel: 'latency, ms (log scale)',
    yLog: true,
    xMin: 0,
    xMax: maxNines,
    formatX: percentileLabel,
    series: results.map((r) => ({
      name: r.name,
      points: Array.from({ length: steps + 1 }, (_, i) => {
        const nines = (i * maxNines) / steps;
        return [nines, Math.max(1, percentileOf(r.latencies, 1 - 10 ** -nines))] as const;
      }),
    })),
  });
}

/** `median (min–max)` of per-seed values, formatted by `f`. */
export function medianRange(values: readonly number[], f: (x: number) => string): string {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const lo = sorted[0] as number;
  const hi = sorted.at(-1) as number;
  return lo === hi ? f(median) : `${f(median)} (${f(lo)}–${f(hi)})`;
}

/** The table of a variant run over several seeds: the median and the range of each column. */
export function hedgingSeedsTable(runs: HedgingResult[][], requests: number): string {
  return table(
    ['client', 'p50', 'p99', 'p99.9', 'extra requests', 'failed'],
    runs.map((perSeed) => {
      const col = (g: (r: HedgingResult) => number, f: (x: number) => string) => medianRange(perSeed.map(g), f);
      const msf = (x: number) => `${Math.round(x)} ms`;
      return [
        (perSeed[0] as HedgingResult).name,
        col((r) => percentileOf(r.latencies, 0.5), msf),
        col((r) => percentileOf(r.latencies, 0.99), msf),
        col((r) => percentileOf(r.latencies, 0.999), msf),
        col(
          (r) => r.extraLoad,
          (x) => `${pct(x)} %`,
        ),
        col(
          (r) => r.failed / requests,
          (x) => `${pct(x)} %`,
        ),
      ];
    }),
  );
}

/** The median over seeds of one statistic. */
export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Runs both servers with every variant over `seeds` seeds; the tables, the chart (first seed) and the headline. */
export async function runHedging(
  seed: number,
  progress: (message: string) => void,
  size: { seeds: number; spareRequests: number; overloadedRequests: number } = {
    seeds: 5,
    spareRequests: SPARE.requests,
    overloadedRequests: OVERLOADED.requests,
  },
): Promise<{
  spareTable: string;
  overloadedTable: string;
  svg: string;
  headline: string;
  baselineP999: number;
  hedgedP999: number;
  extraLoad: number;
}> {
  const spare: HedgingResult[][] = [];
  const overloaded: HedgingResult[][] = [];
  for (const variant of hedgingVariants()) {
    const a: HedgingResult[] = [];
    const b: HedgingResult[] = [];
    for (let k = 0; k < size.seeds; k++) {
      a.push(await hedging({ ...SPARE, requests: size.spareRequests, seed: seed + k }, variant));
      b.push(await hedging({ ...OVERLOADED, requests: size.overloadedRequests, seed: seed + k }, variant));
    }
    spare.push(a);
    overloaded.push(b);
    progress(`hedging: ${variant.name}, ${size.seeds} seeds`);
  }
  const p999 = (runs: HedgingResult[]) => medianOf(runs.map((r) => percentileOf(r.latencies, 0.999)));
  const baselineP999 = p999(spare[0] as HedgingResult[]);
  const hedgedP999 = p999(spare[2] as HedgingResult[]);
  const extraLoad = medianOf((spare[2] as HedgingResult[]).map((r) => r.extraLoad));
  const line = `hedging: p99.9 ${Math.round(baselineP999)} ms -> ${Math.round(hedgedP999)} ms, extra load ${pct(extraLoad)} %`;
  return {
    spareTable: hedgingSeedsTable(spare.slice(0, 3), size.spareRequests),
    overloadedTable: hedgingSeedsTable(overloaded, size.overloadedRequests),
    svg: hedgingChart(spare.slice(0, 3).map((runs) => runs[0] as HedgingResult)),
    headline: line,
    baselineP999,
    hedgedP999,
    extraLoad,
  };
}
