import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchor, buildReadme } from '../../scripts/readme.js';

describe('README.md', () => {
  it('is what `npm run readme` builds from docs/readme/ (run it after editing a section)', () => {
    const committed = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(committed === buildReadme(), 'README.md is out of date: run `npm run readme`').toBe(true);
  });

  it('starts with the two commands a newcomer runs after cloning', () => {
    const readme = buildReadme();
    const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
    expect(readme.indexOf('```sh')).toBeLessThan(200);
    expect(firstBlock).toMatch(/^npm ci && npm run demo\b/m);
    expect(firstBlock).toMatch(/^npm test\b/m);
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
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages()) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:: not ours to check offline
        const [path = '', fragment] = target.split('#');
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        checked++;
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
        } else if (fragment !== undefined && file.endsWith('.md')) {
          const headings = [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string));
          if (!headings.includes(fragment)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
