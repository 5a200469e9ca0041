// `node --import tsx scripts/fleet-docs.ts`: fills the generated parts (`<!-- sim:KEY -->`) of the
// fleet pages from docs/fleet-sim.json, the fragments the last `npm run sim` wrote, and rebuilds
// README.md. `npm run sim` does this itself; run this after editing the prose around the markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fillGenerated } from './lib/generated.js';
import { buildReadme } from './readme.js';

/** The pages with generated parts, from the repository's root. */
export const FLEET_PAGES = ['docs/fleet.md', 'docs/readme/fleet.md', 'docs/readme/hedging.md'] as const;

const ROOT = new URL('../', import.meta.url);

export function writeFleetDocs(fragments: Readonly<Record<string, string>>): void {
  for (const page of FLEET_PAGES) {
    const path = fileURLToPath(new URL(page, ROOT));
    writeFileSync(path, fillGenerated(readFileSync(path, 'utf8'), fragments, page));
  }
  writeFileSync(fileURLToPath(new URL('README.md', ROOT)), buildReadme());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFleetDocs(JSON.parse(readFileSync(fileURLToPath(new URL('docs/fleet-sim.json', ROOT)), 'utf8')));
  console.log('generated parts of the fleet pages and README.md written from docs/fleet-sim.json');
}
