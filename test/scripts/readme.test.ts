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

describe('README.md: "Why this one"', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n');
  const start = lines.indexOf('## Why this one');
  const end = lines.findIndex((line, i) => i > start && /^#{1,2} /.test(line));
  const bullets = lines
    .slice(start, end)
    .join('\n')
    .split(/\n(?=- \*\*)/)
    .slice(1);

  it('is within the first 100 lines, whole', () => {
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    expect(end).toBeLessThanOrEqual(100);
  });

  it('names each library a reader may be choosing between', () => {
    const section = bullets.join('\n');
    for (const name of ['p-retry', 'cockatiel', 'axios-retry', 'RetryAgent', 'got', 'ky', 'Polly', 'resilience4j']) {
      expect(section, name).toMatch(new RegExp(`\\b${name}\\b`));
    }
  });

  it('backs each claim with a link into this repository, to a file and heading that exist; the tests it names exist', () => {
    expect(bullets.length).toBeGreaterThanOrEqual(7);
    for (const bullet of bullets) {
      // A link the installed package resolves too: a page it ships, or a heading of the README.
      const links = [...bullet.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((target) => !/^[a-z]+:/.test(target));
      expect(links.length, bullet).toBeGreaterThan(0);
      for (const target of links) {
        const [path = '', fragment] = target.split('#');
        const file = join(ROOT, path === '' ? 'README.md' : path);
        expect(existsSync(file), target).toBe(true);
        if (fragment !== undefined) {
          const headings = [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string));
          expect(headings, target).toContain(fragment);
        }
      }
      for (const [, named] of bullet.matchAll(/`(test\/[^`]+)`/g)) expect(existsSync(join(ROOT, named as string)), named).toBe(true);
    }
  });
});

describe('README.md: the comparison table', () => {
  it("names every jitter retry() takes in tenacious's Jitter cell ('decorrelated' was missing)", async () => {
    const { BACKOFF_RULES } = await import('../../src/core/backoff.js');
    const names = [...(BACKOFF_RULES.jitter?.rule ?? '').matchAll(/'(\w+)'/g)].map((m) => m[1] as string);
    expect(names).toEqual(['none', 'full', 'equal', 'decorrelated']);
    const row = buildReadme()
      .split('\n')
      .find((line) => line.startsWith('| Jitter |'));
    const cell = row?.split('|')[2] ?? '';
    for (const name of names) expect(cell, name).toContain(`'${name}'`);
    expect(cell).toContain('{ additiveMs }');
  });
});
