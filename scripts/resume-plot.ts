// npm run readme's resume section: what a broken download costs, restarted vs resumed.
//
// 1. A run: a 32 MiB object on a loopback server that behaves like Google's storage testbench
//    (test/fetch/testbench.ts), the connection cut after 24 MiB, downloaded with retryFetch
//    twice: `resume: false, bufferBody: true` (the attempt fails and the object is fetched
//    again from byte 0) and the default (the rest is asked for with Range). Prints the bytes
//    the server sent and the requests it saw, for docs/readme/resume.md.
// 2. The picture, docs/resume-bytes.svg: the same download over a 10 MiB/s link with a 1 s
//    backoff, computed, not timed, so the chart is the same on every machine.
//
//    node --import tsx scripts/resume-plot.ts [outDir]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { retryFetch } from '../src/fetch/index.js';
import { pattern, startTestbench } from '../test/fetch/testbench.js';
import { renderChart } from './lib/svg-chart.js';

const MiB = 1024 * 1024;
const SIZE = 32 * MiB;
const BREAK = 24 * MiB;
const quick = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const }, deadlineMs: 60_000 };

async function run(resume: boolean): Promise<{ sentMiB: number; requests: number; ms: number; exact: boolean }> {
  const tb = await startTestbench();
  const data = pattern(SIZE);
  tb.objects.set('big.bin', { data, generation: '1' });
  tb.downloadFaults.push({ breakAfter: BREAK });
  const started = performance.now();
  const res = await retryFetch(tb.mediaUrl('big.bin'), undefined, resume ? quick : { ...quick, resume: false, bufferBody: true });
  const body = Buffer.from(await res.arrayBuffer());
  const ms = performance.now() - started;
  await tb.close();
  const sent = tb.seen.reduce((sum, s) => sum + s.sentBytes, 0);
  return { sentMiB: sent / MiB, requests: tb.seen.length, ms, exact: body.equals(data) };
}

/** Bytes of the object in hand over time (s, MiB), for a link of `rate` MiB/s and one `backoff`. */
function model(resume: boolean, rate = 10, backoff = 1): Array<[number, number]> {
  const broke = BREAK / MiB / rate;
  const again = broke + backoff;
  const from = resume ? BREAK / MiB : 0;
  const done = again + (SIZE / MiB - from) / rate;
  return resume
    ? [
        [0, 0],
        [broke, BREAK / MiB],
        [again, BREAK / MiB],
        [done, SIZE / MiB],
      ]
    : [
        [0, 0],
        [broke, BREAK / MiB],
        [broke, 0],
        [again, 0],
        [done, SIZE / MiB],
      ];
}

const outDir = process.argv[2] ?? 'docs';
const restart = await run(false);
const resumed = await run(true);
for (const [label, r] of [
  ['restart', restart],
  ['resume', resumed],
] as const) {
  console.log(`${label}: ${r.sentMiB} MiB sent in ${r.requests} requests, ${r.ms.toFixed(0)} ms on loopback, bytes exact: ${r.exact}`);
}

const restartLine = model(false);
const resumeLine = model(true);
const svg = renderChart({
  title: '32 MiB download, connection cut at 24 MiB, 10 MiB/s, 1 s backoff',
  xLabel: 'seconds',
  yLabel: 'MiB of the object in hand',
  series: [
    { name: `restart: ${SIZE / MiB + BREAK / MiB} MiB sent, done at ${restartLine.at(-1)?.[0].toFixed(1)} s`, points: restartLine },
    { name: `resume (Range: bytes=${BREAK}-): ${SIZE / MiB} MiB sent, done at ${resumeLine.at(-1)?.[0].toFixed(1)} s`, points: resumeLine },
  ],
  shadeX: [{ from: BREAK / MiB / 10, to: BREAK / MiB / 10 + 1, label: 'backoff' }],
  xMin: 0,
  yMin: 0,
});
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'resume-bytes.svg'), svg);
console.log(`wrote ${join(outDir, 'resume-bytes.svg')}`);
