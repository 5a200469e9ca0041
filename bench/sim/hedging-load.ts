// Scenario 5, hedging under load. The unlimited-servers model of hedging.ts serves every copy
// on its own, so a hedge costs nothing but a request and latency never depends on load: the
// upper bound of what hedging can give. Here a fixed set of replicas each serve a few requests
// at a time (workers) from one FIFO queue (latency grows with utilisation), the hedge goes to a different
// replica than the first copy, and what the server does with a cancelled copy is a setting.
//
// Common random numbers: request i's arrival, its first replica and the service time of each of
// its copies are drawn from streams of (seed, i), so every variant of one seed sees the same
// requests, and "server work" differences come from hedging alone.
import { type HedgeOptions, createHedger, hedge } from '../../src/index.js';
import { MEAN_SERVICE_MS, percentileOf, serviceTime } from './hedging.js';
import { seededRandom, streamSeed } from './random.js';
import { installVirtualClock } from './virtual-time.js';

/**
 * What a replica does with a copy whose client has gone:
 * - `'none'`: nothing, it never learns (HTTP/1.1 to a server that does not watch the socket):
 *   a queued copy is still served, a copy in service runs to the end;
 * - `'stop'`: it drops the copy from its queue and stops serving it (HTTP/2 RST_STREAM or gRPC
 *   cancellation reaching a server that checks for it).
 */
export type Cancellation = 'none' | 'stop';

export interface LoadedConfig {
  replicas: number;
  /** Requests one replica serves at once; the rest wait in its FIFO queue. */
  workers: number;
  /** Offered load without hedging: arrival rate × mean service time ÷ replicas, in (0, 1). */
  utilisation: number;
  requests: number;
  seed: number;
  cancellation: Cancellation;
}

export interface LoadedVariant {
  name: string;
  /** Called once per run: a hedger created inside is shared by that run's calls. */
  options: () => HedgeOptions;
}

export interface LoadedResult {
  /** Client latency of every successful request, ascending, in ms. */
  latencies: number[];
  failed: number;
  /** Copies sent ÷ requests − 1. */
  extraRequests: number;
  /** Server busy time ÷ the service time of the requests' first copies − 1. */
  extraWork: number;
  /** Calls a hedge won ÷ hedges sent (NaN without hedges). */
  hedgeWinRate: number;
}

const DEADLINE_MS = 10_000;

/** Poisson arrivals of `config.requests` requests against replicas with FIFO queues. */
export async function loadedHedging(config: LoadedConfig, variant: LoadedVariant): Promise<LoadedResult> {
  const clock = installVirtualClock();
  try {
    const { replicas, workers, utilisation, requests, seed, cancellation } = config;
    const arrivals = seededRandom(streamSeed(seed, 1));
    const ratePerMs = (utilisation * replicas * workers) / MEAN_SERVICE_MS;
    const options = variant.options();

    type Job = { ms: number; cancelled: boolean; timer?: ReturnType<typeof setTimeout>; startedAt: number; done: () => void };
    const queues: Job[][] = Array.from({ length: replicas }, () => []);
    const serving: Array<Set<Job>> = Array.from({ length: replicas }, () => new Set());
    let busyMs = 0;
    let firstWorkMs = 0;
    let copies = 0;

    const startNext = (r: number): void => {
      const queue = queues[r] as Job[];
      const inService = serving[r] as Set<Job>;
      while (queue.length > 0 && inService.size < workers) {
        const job = queue.shift() as Job;
        if (job.cancelled) continue;
        inService.add(job);
        job.startedAt = clock.now();
        job.timer = setTimeout(() => {
          busyMs += job.ms;
          inService.delete(job);
          job.done();
          startNext(r);
        }, job.ms);
      }
    };
    const cancel = (r: number, job: Job): void => {
      job.cancelled = true;
      const inService = serving[r] as Set<Job>;
      if (!inService.has(job)) return; // still queued: startNext skips it
      clearTimeout(job.timer);
      busyMs += clock.now() - job.startedAt;
      inService.delete(job);
      startNext(r);
    };

    const latencies: number[] = [];
    let failed = 0;
    let pending = 0;
    let issued = 0;
    let hedgesWon = 0;

    const issue = (i: number): void => {
      const rng = seededRandom(streamSeed(seed, 2 + i));
      const first = Math.floor(rng() * replicas);
      // Another replica for the hedge, uniformly among the others.
      const other = (first + 1 + Math.floor(rng() * (replicas - 1))) % replicas;
      const service = [serviceTime(rng), serviceTime(rng)];
      firstWorkMs += service[0] as number;
      const startedAt = clock.now();
      const attempt = ({ copy: n, signal }: { copy: number; signal: AbortSignal }): Promise<number> => {
        copies++;
        const r = n === 1 ? first : other;
        return new Promise<number>((resolve, reject) => {
          const job: Job = { ms: service[n - 1] ?? (service[1] as number), cancelled: false, startedAt: 0, done: () => resolve(n) };
          signal.addEventListener('abort', () => {
            if (cancellation === 'stop') cancel(r, job);
            reject(signal.reason);
          });
          (queues[r] as Job[]).push(job);
          startNext(r);
        });
      };
      pending++;
      issued++;
      hedge(attempt, options).then(
        (winner) => {
          pending--;
          if (winner > 1) hedgesWon++;
          latencies.push(clock.now() - startedAt);
        },
        () => {
          pending--;
          failed++;
        },
      );
    };
    const loop = async (): Promise<void> => {
      let t = 0;
      for (let i = 0; i < requests; i++) {
        t += -Math.log(1 - arrivals()) / ratePerMs;
        const wait = Math.floor(t) - clock.now();
        if (wait > 0) await clock.sleep(wait);
        issue(i);
      }
    };
    void loop();
    // Done when every call has settled and every replica is idle (a loser may still be served).
    await clock.runUntil(() => issued === requests && pending === 0 && serving.every((s) => s.size === 0));
    latencies.sort((a, b) => a - b);
    const hedges = copies - requests;
    return {
      latencies,
      failed,
      extraRequests: hedges / requests,
      extraWork: busyMs / firstWorkMs - 1,
      hedgeWinRate: hedges === 0 ? Number.NaN : hedgesWon / hedges,
    };
  } finally {
    clock.uninstall();
  }
}

// --- The grid `npm run sim` runs ----------------------------------------------------------

export const LOADED = { replicas: 10, workers: 4, utilisations: [0.3, 0.5, 0.7, 0.85], seeds: 5, requests: 20_000 } as const;
export const LOADED_FIXED_DELAY_MS = 20;

export function loadedVariants(): LoadedVariant[] {
  return [
    { name: 'no hedging', options: () => ({ delayMs: 0, idempotent: false, deadlineMs: DEADLINE_MS }) },
    { name: `fixed ${LOADED_FIXED_DELAY_MS} ms, no limit`, options: () => ({ delayMs: LOADED_FIXED_DELAY_MS, deadlineMs: DEADLINE_MS }) },
    {
      name: 'adaptive p95, maxExtraLoad 5 %',
      options: () => ({ hedger: createHedger({ percentile: 0.95, maxExtraLoad: 0.05 }), deadlineMs: DEADLINE_MS }),
    },
  ];
}

/** One cell of the grid: the per-seed results' median and range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted.at(-1) as number };
}

export interface LoadedRow {
  utilisation: number;
  cancellation: Cancellation | '—';
  variant: string;
  p50: Spread;
  p99: Spread;
  p999: Spread;
  extraRequests: Spread;
  extraWork: Spread;
  hedgeWinRate: Spread;
  failed: Spread;
}

/** Runs `variant` over `seeds` seeds (seed, seed + 1, …) and summarises. */
export async function loadedRow(
  base: Omit<LoadedConfig, 'seed'>,
  seed: number,
  seeds: number,
  variant: LoadedVariant,
  cancellationLabel: Cancellation | '—',
): Promise<LoadedRow> {
  const runs: LoadedResult[] = [];
  for (let k = 0; k < seeds; k++) runs.push(await loadedHedging({ ...base, seed: seed + k }, variant));
  const of = (f: (r: LoadedResult) => number) => spread(runs.map(f));
  return {
    utilisation: base.utilisation,
    cancellation: cancellationLabel,
    variant: variant.name,
    p50: of((r) => percentileOf(r.latencies, 0.5)),
    p99: of((r) => percentileOf(r.latencies, 0.99)),
    p999: of((r) => percentileOf(r.latencies, 0.999)),
    extraRequests: of((r) => r.extraRequests),
    extraWork: of((r) => r.extraWork),
    hedgeWinRate: of((r) => r.hedgeWinRate),
    failed: of((r) => r.failed / base.requests),
  };
}

const fmtMs = (x: number): string => `${Math.round(x)} ms`;
const fmtPct = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`;
const cell = (s: Spread, f: (x: number) => string): string =>
  s.min === s.max ? f(s.median) : `${f(s.median)} (${f(s.min)} to ${f(s.max)})`;
const cellMs = (s: Spread): string =>
  s.min === s.max ? fmtMs(s.median) : `${fmtMs(s.median)} (${Math.round(s.min)}–${Math.round(s.max)})`;

export const CANCELLATION_TEXT: Record<Cancellation | '—', string> = {
  '—': '—',
  none: 'runs to completion',
  stop: 'stops',
};

export function loadedTable(rows: LoadedRow[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const header = ['load', 'cancelled copy', 'client', 'p50', 'p99', 'p99.9', 'requests sent', 'server work', 'hedges that won'];
  return [
    line(header),
    line(header.map(() => '---')),
    ...rows.map((r) =>
      line([
        `${Math.round(r.utilisation * 100)} %`,
        CANCELLATION_TEXT[r.cancellation],
        r.variant,
        cellMs(r.p50),
        cellMs(r.p99),
        cellMs(r.p999),
        cell(r.extraRequests, fmtPct),
        cell(r.extraWork, fmtPct),
        Number.isNaN(r.hedgeWinRate.median) ? '—' : cell(r.hedgeWinRate, (x) => `${Math.round(x * 100)} %`),
      ]),
    ),
  ].join('\n');
}

export interface LoadedSize {
  seeds: number;
  requests: number;
  utilisations: readonly number[];
}

/** The whole grid: per load, no hedging once, then each hedging variant under each cancellation setting. */
export async function runLoaded(seed: number, progress: (message: string) => void, size: LoadedSize): Promise<LoadedRow[]> {
  const [none, ...hedged] = loadedVariants() as [LoadedVariant, ...LoadedVariant[]];
  const rows: LoadedRow[] = [];
  for (const utilisation of size.utilisations) {
    const base = { replicas: LOADED.replicas, workers: LOADED.workers, utilisation, requests: size.requests };
    rows.push(await loadedRow({ ...base, cancellation: 'none' }, seed, size.seeds, none, '—'));
    for (const cancellation of ['none', 'stop'] as const) {
      for (const variant of hedged) rows.push(await loadedRow({ ...base, cancellation }, seed, size.seeds, variant, cancellation));
    }
    progress(`hedging under load: ${Math.round(utilisation * 100)} %, ${size.seeds} seeds`);
  }
  return rows;
}

/** The second `hedging` line: 50 % load, adaptive hedging, both cancellation settings. */
export function loadedHeadline(rows: LoadedRow[], utilisation: number): string {
  const at = rows.filter((r) => r.utilisation === utilisation);
  const base = at.find((r) => r.variant === 'no hedging');
  const adaptive = (c: Cancellation) => at.find((r) => r.cancellation === c && r.variant.startsWith('adaptive'));
  const run = adaptive('none');
  const stop = adaptive('stop');
  if (base === undefined || run === undefined || stop === undefined) throw new Error(`no loaded rows at ${utilisation}`);
  const pctLoad = Math.round(utilisation * 100);
  return (
    `hedging at ${pctLoad} % load: p99.9 ${fmtMs(base.p999.median)} -> ${fmtMs(run.p999.median)} (loser runs to completion, server work ${fmtPct(run.extraWork.median)}), ` +
    `${fmtMs(stop.p999.median)} (server stops cancelled copies, server work ${fmtPct(stop.extraWork.median)})`
  );
}
