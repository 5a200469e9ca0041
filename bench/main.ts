/**
 * `npm run bench`: the success-path ratios (bench/speed.ts), the heap bytes per sleeping retry
 * (bench/memory.ts) and the bundle sizes (bench/size.ts), printed as the markdown tables of
 * BENCHMARKS.md. Each timing and memory measurement runs in fresh processes, several times;
 * the tables give the median and the range.
 *
 * The `redis` section compares the success path through a gate shared by Redis with the
 * in-process gate (bench/redis-gate.ts; it starts a redis-server of its own).
 *
 *   npm run bench -- [--runs 3] [--rounds 3] [--calls 50000] [--only speed,memory,size,redis]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { contenders } from './contenders.js';
import type { Library } from './library.js';
import { sleepers } from './memory.js';
import { GATES } from './redis-gate.js';
import { SIZE_BUDGETS, featureTable, measureBundle, moduleTable } from './size.js';
import type { SpeedRun } from './speed.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    calls: { type: 'string', default: '50000' },
    only: { type: 'string', default: 'speed,memory,size,redis' },
  },
});
const runs = positiveInteger('runs', values.runs);
const rounds = positiveInteger('rounds', values.rounds);
const calls = positiveInteger('calls', values.calls);
const only = new Set(values.only.split(','));

function positiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`--${name} must be an integer >= 1, got ${JSON.stringify(text)}`);
  return value;
}

/** Runs a bench script in a fresh Node process (as this one: tsx, --expose-gc) and parses its JSON line. */
function child<T>(script: string, args: string[]): T {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...args], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) ?? 'null') as T;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const range = (values: number[], digits: number): string => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

function machine(): string {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown';
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `Node ${process.version}, ${availableParallelism()} CPUs (nproc), CPU model: ${model}, load average ${load}`;
}

console.log(`# tenacious benchmarks\n\n${machine()}\n`);

if (only.has('speed')) {
  console.log(`## Success path: time per call / bare \`await fn()\` (each contender in ${runs} processes of its own × ${rounds} rounds)\n`);
  console.log('| contender | × bare (median) | range over processes | ns per call (median) |');
  console.log('|---|---:|---:|---:|');
  // The names only: no contender's wrap runs here.
  const names = contenders({} as Library).map((c) => c.name);
  for (const [index, name] of names.entries()) {
    const perRun: SpeedRun[] = [];
    // Interleaved with the other contenders' processes would be fairer still, at the cost of
    // printing nothing until the end; load that comes and goes shows in the range.
    for (let i = 0; i < runs; i++) perRun.push(child<SpeedRun>('./speed.ts', [String(index), String(rounds)]));
    const runMedians = perRun.map((run) => median(run.ratios[name] ?? []));
    const ns = median(perRun.flatMap((run) => run.nanoseconds[name] ?? []));
    console.log(`| ${name} | ${median(runMedians).toFixed(2)} | ${range(runMedians, 2)} | ${ns.toFixed(0)} |`);
  }
  console.log();
}

if (only.has('redis')) {
  console.log(`## Success path through a gate: Redis-shared vs in-process (${runs} processes each, alternating × ${rounds} rounds)\n`);
  console.log('| gate | × bare (median) | range over processes | ns per call (median) |');
  console.log('|---|---:|---:|---:|');
  const medians: Record<string, number> = {};
  const perKind: Record<string, SpeedRun[]> = { local: [], redis: [] };
  // Alternated, so that load that comes and goes falls on both.
  for (let i = 0; i < runs; i++)
    for (const kind of ['local', 'redis']) perKind[kind]?.push(child<SpeedRun>('./redis-gate.ts', [kind, String(rounds)]));
  for (const [kind, name] of Object.entries(GATES)) {
    const runMedians = (perKind[kind] ?? []).map((run) => median(run.ratios[name] ?? []));
    const ns = median((perKind[kind] ?? []).flatMap((run) => run.nanoseconds[name] ?? []));
    medians[kind] = median(runMedians);
    console.log(`| ${name} | ${median(runMedians).toFixed(2)} | ${range(runMedians, 2)} | ${ns.toFixed(0)} |`);
  }
  console.log(
    `\nRedis gate ÷ in-process gate: ${((medians.redis as number) / (medians.local as number)).toFixed(2)}× (issue 36's target: 1.1×)\n`,
  );
}

if (only.has('memory')) {
  console.log(`## Heap per sleeping retry (${calls.toLocaleString('en')} calls that failed once, waiting 60 s; ${runs} processes each)\n`);
  console.log('| contender | bytes per call (median) | range |');
  console.log('|---|---:|---:|');
  for (const name of Object.keys(sleepers)) {
    const bytes: number[] = [];
    for (let i = 0; i < runs; i++) bytes.push(child<{ bytesPerCall: number }>('./memory.ts', [name, String(calls)]).bytesPerCall);
    console.log(`| ${name} | ${median(bytes).toFixed(0)} | ${range(bytes, 0)} |`);
  }
  console.log();
}

if (only.has('size')) {
  console.log('## Bundle size (esbuild bundle + minify, gzip -9)\n');
  console.log('| import | minified | min+gz | issue target | enforced limit | largest modules (≈ gz share) |');
  console.log('|---|---:|---:|---:|---:|---|');
  const tables: string[] = [];
  for (const budget of SIZE_BUDGETS) {
    const size = await measureBundle(budget.source);
    tables.push(`${budget.name}\n${moduleTable(size)}`);
    const top = size.modules
      .slice(0, 4)
      .map((m) => `${m.path.replace(/^src\//, '')} ${m.gzipBytes}`)
      .join(', ');
    console.log(
      `| \`${budget.source.replace(/\n/g, ' ')}\` | ${size.minifiedBytes} | ${size.gzipBytes} | ${budget.targetBytes ?? '—'} | ${budget.limitBytes} | ${top} |`,
    );
  }
  const core = SIZE_BUDGETS[0];
  if (core !== undefined) console.log(`\nFeature by feature, \`${core.source}\`:\n\n${featureTable(await measureBundle(core.source))}`);
  console.log(`\nEvery module (its gzip share is its part of the minified bytes):\n\n\`\`\`\n${tables.join('\n\n')}\n\`\`\`\n`);
}

console.log(`Finished; ${machine().replace(/^.*load average/, 'load average')}.`);
