import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchor, buildReadme } from '../../scripts/readme.js';
import { brokenLinksOf } from '../helpers/doc-links.js';

describe('README.md', () => {
  it('is what `npm run readme` builds from docs/readme/ (run it after editing a section)', () => {
    const committed = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(committed === buildReadme(), 'README.md is out of date: run `npm run readme`').toBe(true);
  });

  it('starts with what a user types: the install, then a retried call', () => {
    const readme = buildReadme();
    const blocks = [...readme.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], code: m[2] }));
    expect(blocks[0]).toEqual({ lang: 'sh', code: 'npm install tenacious\n' });
    expect(blocks[1]?.lang).toBe('ts');
    expect(blocks[1]?.code).toMatch(/^import \{ retry \} from 'tenacious';$/m);
    expect(readme.indexOf('npm install tenacious')).toBeLessThan(600);
  });

  it('gives a newcomer the two commands to run after cloning, in a section of their own', () => {
    const readme = buildReadme();
    const section = readme.slice(readme.indexOf('## Working on tenacious'));
    const block = section.slice(section.indexOf('```sh'), section.indexOf('```', section.indexOf('```sh') + 5));
    expect(readme).toContain('- [Working on tenacious](#working-on-tenacious)');
    expect(block).toMatch(/^npm ci && npm run demo\b/m);
    expect(block).toMatch(/^npm test\b/m);
  });

  it('shows the command line wrapping no command that retries by itself (one retry layer)', () => {
    const shown = [buildReadme(), readFileSync(join(ROOT, 'docs/cli.md'), 'utf8')].join('\n');
    const wrapped = [...shown.matchAll(/npx tenacious [^\n]*? -- ([^\n]+)/g)].map((m) => m[1] as string);
    expect(wrapped.length).toBeGreaterThanOrEqual(3);
    expect(wrapped.filter((command) => /^(gsutil|gcloud|aws|az)\b|\s--retry\b/.test(command))).toEqual([]);
  });

  it('links its table of contents to headings that exist', () => {
    const readme = buildReadme();
    const anchors = new Set([...readme.matchAll(/^#{2,3} (.+)$/gm)].map((m) => anchor(m[1] as string)));
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((link) => !anchors.has(link as string))).toEqual([]);
  });

  it('stays at most 600 lines: what users need, with depth in docs/', () => {
    expect(buildReadme().split('\n').length - 1).toBeLessThanOrEqual(600);
  });

  it('makes anchors the way GitHub does', () => {
    expect(anchor('HTTP: `retryFetch`')).toBe('http-retryfetch');
    expect(anchor('What `retry()` promises')).toBe('what-retry-promises');
  });
});

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The user and maintainer pages: the README, the pages under docs/ and the root pages. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', 'CONTRIBUTING.md', 'BENCHMARKS.md', ...docs].filter((page) => existsSync(join(ROOT, page)));
}

describe('the documentation pages', () => {
  it('link only to files and headings that exist', () => {
    const results = pages().map((page) => brokenLinksOf(ROOT, page));
    expect(results.reduce((sum, { checked }) => sum + checked, 0)).toBeGreaterThan(20);
    expect(results.flatMap(({ broken }) => broken)).toEqual([]);
  });
});
