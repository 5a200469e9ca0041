// Re-tests the mutants that survived in the committed incremental report, one source file at a
// time, without a Stryker run: each surviving mutant's replacement is written into the file, the
// test files that covered it run under vitest, and the file is put back. A quick loop for killing
// survivors; `npm run test:mutation` stays the measure (docs/reliability.md).
//
//   node --import tsx scripts/try-mutants.ts src/fleet/hedger.ts [more files] [-- extra test files]
//   node --import tsx scripts/try-mutants.ts --disabled src/core/hooks.ts [...]
//
// With --disabled it tries the mutants a `// Stryker disable next-line` comment turns off
// instead (Stryker reports them Ignored, with no coverage), against the tests that cover the
// mutants within a few lines of them: a comment whose line holds a mutant the tests kill hides
// more than the one mutant its reason argues about. Run it in a worktree of its own: it writes
// mutants into src/.
//
// A mutant is found again after edits by the text of its line in the reported source; one whose
// line is gone or ambiguous is listed as "moved" and skipped. Prints each mutant as killed or
// survived and exits 1 if any survived.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

interface Position {
  line: number;
  column: number;
}
interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  coveredBy?: string[];
  location: { start: Position; end: Position };
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
  testFiles: Record<string, { tests: { id: string; name: string }[] }>;
}

const disabledMode = process.argv.includes('--disabled');
const args = process.argv.slice(2).filter((a) => a !== '--disabled');
const split = args.indexOf('--');
const sources = split < 0 ? args : args.slice(0, split);
const extraTests = split < 0 ? [] : args.slice(split + 1);
const report = JSON.parse(readFileSync('reports/stryker-incremental.json', 'utf8')) as Report;

const fileOfTest = new Map<string, string>();
for (const [file, { tests }] of Object.entries(report.testFiles)) for (const t of tests) fileOfTest.set(t.id, file);

/** Offset of a 1-based line and column in text. */
function offsetOf(text: string, { line, column }: Position): number {
  let offset = 0;
  for (let l = 1; l < line; l++) offset = text.indexOf('\n', offset) + 1;
  return offset + column - 1;
}

/** The mutated text of `current`, or undefined when the mutant's line cannot be found again. */
function mutate(reported: string, current: string, m: Mutant): string | undefined {
  const start = offsetOf(reported, m.location.start);
  const end = offsetOf(reported, m.location.end);
  const lineStart = reported.lastIndexOf('\n', start - 1) + 1;
  const lineEndAt = reported.indexOf('\n', end);
  const context = reported.slice(lineStart, lineEndAt < 0 ? undefined : lineEndAt);
  const at = current.indexOf(context);
  if (at < 0 || current.indexOf(context, at + 1) >= 0) return undefined;
  const from = at + (start - lineStart);
  return current.slice(0, from) + (m.replacement ?? '') + current.slice(from + (end - start));
}

/** Whether a `// Stryker disable next-line` comment right above the mutated line names the mutator. */
function disabled(original: string, mutated: string, mutator: string): boolean {
  let at = 0;
  while (at < original.length && original[at] === mutated[at]) at++;
  const lineStart = original.lastIndexOf('\n', at - 1);
  const previous = original.slice(original.lastIndexOf('\n', lineStart - 1) + 1, lineStart);
  const match = /Stryker disable next-line ([\w,]+)/.exec(previous);
  return (match?.[1] ?? '').split(',').some((name) => name === mutator || name === 'all');
}

let survivors = 0;
for (const source of sources) {
  const entry = report.files[source];
  if (!entry) throw new Error(`no mutants of ${source} in the report`);
  const original = readFileSync(source, 'utf8');
  // Interrupted, the file is put back before the process ends: never leave a mutant in src/.
  const restore = () => {
    writeFileSync(source, original);
    process.exit(130);
  };
  process.once('SIGINT', restore).once('SIGTERM', restore);
  try {
    for (const m of entry.mutants) {
      if (disabledMode ? m.status !== 'Ignored' : m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
      const label = `${source}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} -> ${JSON.stringify(m.replacement)}`;
      const mutated = mutate(entry.source, original, m);
      if (mutated === undefined) {
        console.log(`moved     ${label}`);
        continue;
      }
      if (disabled(original, mutated, m.mutatorName) !== disabledMode) {
        if (!disabledMode) console.log(`disabled  ${label}`);
        continue;
      }
      const near = disabledMode ? entry.mutants.filter((n) => Math.abs(n.location.start.line - m.location.start.line) <= 4) : [m];
      const covering = near.flatMap((n) => n.coveredBy ?? []);
      const tests = [...new Set([...covering.map((id) => fileOfTest.get(id) ?? ''), ...extraTests])].filter(Boolean);
      if (tests.length === 0) {
        console.log(`no tests  ${label}`);
        survivors++;
        continue;
      }
      writeFileSync(source, mutated);
      let killed = false;
      try {
        execFileSync('npx', ['vitest', 'run', '--reporter=dot', ...tests], { stdio: 'ignore' });
      } catch {
        killed = true;
      }
      writeFileSync(source, original);
      if (!killed) survivors++;
      console.log(`${killed ? 'killed   ' : 'SURVIVED '} ${label}`);
    }
  } finally {
    writeFileSync(source, original);
    process.off('SIGINT', restore).off('SIGTERM', restore);
  }
}
console.log(`${survivors} survived`);
process.exit(survivors > 0 ? 1 : 0);
