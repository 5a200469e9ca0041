// Scenario 6, budgets across rates and outage lengths. gRPC's token bucket (createRetryBudget)
// lets a client spend the tokens above half its bucket on retries, maxTokens/2 − 1 retries per
// outage (the first failure is a first attempt), whatever its request rate; so the load it adds
// is that count divided by the requests it sends during the outage. A budget expressed as a
// ratio of retries to requests (the SRE book's per-client 10 %) adds a fixed share instead.
import { type RetryBudget, createRetryBudget } from '../../src/index.js';
import { type OutageConfig, type OutageResult, outage } from './outage.js';

/**
 * The per-client retry budget of the "Handling Overload" chapter of Google's SRE book: a retry
 * is allowed while retries stay at most `ratio` of the requests (first attempts) this client
 * sent in the last `windowMs`. Reads Date.now(), which the simulator's virtual clock drives.
 */
export function createRatioBudget(ratio = 0.1, windowMs = 60_000): RetryBudget {
  const requests: number[] = [];
  const retries: number[] = [];
  let retryNext = 0;
  const trim = (times: number[], now: number): void => {
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= now - windowMs) drop++;
    if (drop > 0) times.splice(0, drop);
  };
  return {
    record(): void {
      // Every attempt is recorded once; the ones canRetry() allowed are the retries.
      if (retryNext > 0) retryNext--;
      else requests.push(Date.now());
    },
    canRetry(): boolean {
      const now = Date.now();
      trim(requests, now);
      trim(retries, now);
      if (retries.length + 1 > ratio * requests.length) return false;
      retries.push(now);
      retryNext++;
      return true;
    },
  };
}

/** ≈ 1 + (maxTokens/2 − 1) ÷ requests per client during the outage: the token bucket's amplification. */
export function bucketAmplification(maxTokens: number, requestsPerSec: number, outageSec: number): number {
  return 1 + (maxTokens / 2 - 1) / (requestsPerSec * outageSec);
}

export interface BudgetCase {
  requestsPerSec: number;
  outageSec: number;
  maxTokens: number;
}

export const BUDGET_CASES: BudgetCase[] = [
  { requestsPerSec: 1, outageSec: 10, maxTokens: 10 },
  { requestsPerSec: 1, outageSec: 60, maxTokens: 10 },
  { requestsPerSec: 1, outageSec: 300, maxTokens: 10 },
  { requestsPerSec: 0.1, outageSec: 60, maxTokens: 10 },
  { requestsPerSec: 0.1, outageSec: 300, maxTokens: 10 },
  { requestsPerSec: 1, outageSec: 60, maxTokens: 100 },
];

export interface BudgetRow extends BudgetCase {
  formula: number;
  bucket: OutageResult;
  ratio: OutageResult;
}

/**
 * Each case with `retry()`'s defaults (no attempt limit, 120 s deadline) and a budget per client.
 * The fleet sends `logicalPerSec` requests/s in all whatever each client's rate (1,000 clients
 * at 0.1/s for 100/s), so the server's capacity and its 100 ms burst are the same in every case.
 */
export async function runBudgets(
  logicalPerSec: number,
  seed: number,
  progress: (message: string) => void,
  cases: BudgetCase[] = BUDGET_CASES,
): Promise<BudgetRow[]> {
  const rows: BudgetRow[] = [];
  for (const c of cases) {
    const clients = Math.round(logicalPerSec / c.requestsPerSec);
    const config: OutageConfig = {
      clients,
      intervalMs: 1000 / c.requestsPerSec,
      beforeMs: 30_000,
      outageMs: c.outageSec * 1000,
      afterMs: 180_000,
      // 20 % above the normal load, as in the main outage run.
      capacityPerSec: Math.round(1.2 * logicalPerSec),
      seed,
    };
    const bucket = await outage(config, {
      name: `token bucket ${c.maxTokens}`,
      clientOptions: (rng) => ({ rng, budget: createRetryBudget({ maxTokens: c.maxTokens }) }),
    });
    const ratio = await outage(config, { name: 'ratio 10 %', clientOptions: (rng) => ({ rng, budget: createRatioBudget() }) });
    rows.push({ ...c, formula: bucketAmplification(c.maxTokens, c.requestsPerSec, c.outageSec), bucket, ratio });
    progress(`budgets: ${c.requestsPerSec} request/s, ${c.outageSec} s outage, ${c.maxTokens} tokens`);
  }
  return rows;
}

/**
 * Seconds of successes after the outage until the bucket is above half again (a stray failure is
 * retried again), by the formula: the outage's failures (its requests plus the retries) drain the
 * bucket, each success gives back 0.1.
 */
export function refillSec(c: BudgetCase): number {
  const failures = c.requestsPerSec * c.outageSec + (c.maxTokens / 2 - 1);
  const left = Math.max(0, c.maxTokens - failures);
  const needed = Math.max(0, Math.floor((c.maxTokens / 2 - left) / 0.1) + 1);
  return needed / c.requestsPerSec;
}

/** The share of the logical requests issued after the outage that succeeded. */
const success = (r: OutageResult): string => `${(r.successAfter * 100).toFixed(2)} %`;

export function budgetTable(rows: BudgetRow[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const header = [
    'requests per client',
    'outage',
    'token bucket',
    'formula',
    'bucket: measured',
    'bucket: retries again after',
    'bucket: success after',
    'ratio 10 %: measured',
    'ratio 10 %: success after',
  ];
  return [
    line(header),
    line(header.map(() => '---')),
    ...rows.map((r) =>
      line([
        `${r.requestsPerSec} /s`,
        `${r.outageSec} s`,
        `${r.maxTokens} tokens`,
        `${r.formula.toFixed(2)}×`,
        `${r.bucket.amplification.toFixed(2)}×`,
        `${Math.round(refillSec(r))} s`,
        success(r.bucket),
        `${r.ratio.amplification.toFixed(2)}×`,
        success(r.ratio),
      ]),
    ),
  ].join('\n');
}
