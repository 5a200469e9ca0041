import { readFileSync } from 'node:fs';
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

  it('makes anchors the way GitHub does', () => {
    expect(anchor('HTTP: `retryFetch`')).toBe('http-retryfetch');
    expect(anchor('What `retry()` promises')).toBe('what-retry-promises');
  });
});
