// npm run readme: README.md is put together from the sections in docs/readme/, in the order
// below, so that each part lives next to the tests that check it (tables are read, and code
// blocks type-checked, by tests from those files). Edit the sections, then run this; a test
// fails when README.md is out of date. What is too deep for the README lives in docs/*.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The README's sections, in reading order. */
export const SECTIONS = [
  'intro.md',
  'core.md',
  'presets.md',
  'fetch.md',
  'resume.md',
  'hedging.md',
  'fleet.md',
  'telemetry.md',
  'recipes.md',
  'cli.md',
  'comparison.md',
  'performance.md',
  'contributing.md',
  'license.md',
] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The README as the sections make it, with a table of contents of the second-level headings. */
export function buildReadme(read: (name: string) => string = (name) => readFileSync(`${ROOT}docs/readme/${name}`, 'utf8')): string {
  const parts = SECTIONS.map((name) => read(name).trim());
  const [intro, ...rest] = parts;
  const headings = rest.flatMap((part) => [...part.matchAll(/^## (.+)$/gm)].map((m) => (m[1] as string).trim()));
  const toc = headings.map((h) => `- [${h.replace(/`/g, '')}](#${anchor(h)})`).join('\n');
  return `${[intro, '## Contents', toc, ...rest].join('\n\n')}\n`;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(`${ROOT}README.md`, buildReadme());
  console.log('README.md written from docs/readme/');
}
