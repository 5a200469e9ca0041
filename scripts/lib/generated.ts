// Generated parts of the docs: `<!-- sim:KEY -->…<!-- /sim -->` holds a fragment that
// `npm run sim` printed (bench/sim/main.ts writes them all to docs/fleet-sim.json). Inline or
// over several lines; the text between the markers is replaced, the markers stay.

const MARKER = /<!-- sim:([a-z0-9-]+) -->([\s\S]*?)<!-- \/sim -->/g;

/** The keys of the generated parts of `text`, in order. */
export function generatedKeys(text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1] as string);
}

/** `text` with every generated part replaced by its fragment; throws on a key the run did not produce. */
export function fillGenerated(text: string, fragments: Readonly<Record<string, string>>, page = 'the page'): string {
  return text.replace(MARKER, (_, key: string, old: string) => {
    const fragment = fragments[key];
    if (fragment === undefined) throw new Error(`${page}: <!-- sim:${key} --> is not a fragment npm run sim produces`);
    // A block fragment (a table, a code block) sits on its own lines between the markers.
    const block = old.startsWith('\n');
    return `<!-- sim:${key} -->${block ? `\n${fragment}\n` : fragment}<!-- /sim -->`;
  });
}
