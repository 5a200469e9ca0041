// The numbers docs/fleet.md and the README quote from the fleet simulator are generated:
// `npm run sim` writes every fragment to docs/fleet-sim.json and into the pages, between
// `<!-- sim:KEY -->` markers. This test is fast because it does not run the simulator (that
// takes minutes): it checks the pages against the committed run output. That the committed
// output is what the code prints today is checked by CI, which runs `npm run sim` and fails
// on any change (.ci/run); test/sim.test.ts checks that the run is reproducible.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLEET_PAGES } from '../../scripts/fleet-docs.js';
import { fillGenerated, generatedKeys } from '../../scripts/lib/generated.js';
import { buildReadme } from '../../scripts/readme.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const PAGES = FLEET_PAGES;
const fragments = JSON.parse(read('docs/fleet-sim.json')) as Record<string, string>;

describe('docs generated from npm run sim', () => {
  it.each(PAGES)('%s holds exactly what the run produced between its markers', (page) => {
    const text = read(page);
    expect(generatedKeys(text).length).toBeGreaterThan(0);
    expect(fillGenerated(text, fragments, page) === text, `${page} differs from docs/fleet-sim.json: run npm run sim`).toBe(true);
  });

  it('every fragment of the run appears in a page, and the README carries them', () => {
    const used = new Set(PAGES.flatMap((page) => generatedKeys(read(page))));
    expect(Object.keys(fragments).filter((key) => !used.has(key))).toEqual([]);
    const readme = buildReadme();
    for (const key of generatedKeys(read('docs/readme/fleet.md'))) expect(readme).toContain(`<!-- sim:${key} -->${fragments[key]}`);
  });

  it('states no hedging or budget figure outside a generated part', () => {
    // The claims the issue found quoted from one seed's draw must not come back as plain text.
    const outside = (text: string) => text.replace(/<!-- sim:[a-z0-9-]+ -->[\s\S]*?<!-- \/sim -->/g, '');
    for (const page of PAGES) {
      const text = outside(read(page));
      expect(text, page).not.toMatch(/\d+(\.\d+)?×/); // amplification factors
      expect(text, page).not.toMatch(/p99(\.9)?[^.\n]{0,40}\d+ ms/); // quoted percentiles
    }
  });

  it('fillGenerated replaces inline and block parts, and refuses a key the run does not produce', () => {
    const page = 'a <!-- sim:x -->old<!-- /sim --> b\n<!-- sim:t -->\n| old |\n<!-- /sim -->\n';
    expect(fillGenerated(page, { x: '1.07×', t: '| new |' })).toBe(
      'a <!-- sim:x -->1.07×<!-- /sim --> b\n<!-- sim:t -->\n| new |\n<!-- /sim -->\n',
    );
    expect(() => fillGenerated(page, { x: '1' }, 'p.md')).toThrow('p.md: <!-- sim:t --> is not a fragment npm run sim produces');
  });
});
