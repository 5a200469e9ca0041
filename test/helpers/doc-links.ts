// The links of a Markdown page, for the tests that check they resolve: in the repository
// (test/scripts/readme.test.ts) and in the installed package (test/package/tarball.test.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { anchor } from '../../scripts/readme.js';

/** Every link of `markdown` that is not a URL with a scheme (`https:`, `mailto:`): paths and `#fragments`. */
export function localLinksOf(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((target) => !/^[a-z]+:/.test(target));
}

/**
 * The local links of the page `page` (a path under `root`) that do not resolve there: the file is
 * missing, or the `#fragment` names no heading of the Markdown file it points into. Each is
 * reported as `page: target (why)`.
 */
export function brokenLinksOf(root: string, page: string): { checked: number; broken: string[] } {
  const links = localLinksOf(readFileSync(join(root, page), 'utf8'));
  const broken: string[] = [];
  for (const target of links) {
    const [path = '', fragment] = target.split('#');
    const file = path === '' ? join(root, page) : join(root, dirname(page), path);
    if (!existsSync(file)) {
      broken.push(`${page}: ${target} (no such file)`);
    } else if (fragment !== undefined && file.endsWith('.md')) {
      const headings = [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string));
      if (!headings.includes(fragment)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  return { checked: links.length, broken };
}
