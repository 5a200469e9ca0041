/**
 * Prints the per-file table of docs/reliability.md from Stryker's JSON report
 * (reports/mutation/mutation.json, written by `npm run test:mutation`):
 *   node --import tsx scripts/mutation-table.ts [report]
 */
import { readFileSync } from 'node:fs';

interface Mutant {
  readonly status: string;
}
interface Report {
  readonly files: Record<string, { readonly mutants: readonly Mutant[] }>;
}

const COLUMNS = ['Killed', 'Timeout', 'Survived', 'NoCoverage', 'Ignored'] as const;
const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8')) as Report;

/** Mutants by status, and Stryker's score: detected (killed or timed out) over all but ignored ones. */
function tally(mutants: readonly Mutant[]): { counts: Record<string, number>; score: number } {
  const counts: Record<string, number> = Object.fromEntries(COLUMNS.map((status) => [status, 0]));
  for (const { status } of mutants) counts[status] = (counts[status] ?? 0) + 1;
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const valid = detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
  return { counts, score: valid === 0 ? 100 : (100 * detected) / valid };
}

const row = (name: string, mutants: readonly Mutant[]): string => {
  const { counts, score } = tally(mutants);
  return `| ${name} | ${mutants.length} | ${COLUMNS.map((status) => counts[status]).join(' | ')} | ${score.toFixed(2)} % |`;
};

console.log('| file | mutants | killed | timed out | survived | no coverage | disabled | score |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
const files = Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b));
for (const [path, { mutants }] of files) console.log(row(`\`${path.replace(/^src\//, '')}\``, mutants));
const all = files.flatMap(([, { mutants }]) => mutants);
console.log(row('**all**', all));
