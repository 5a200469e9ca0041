// Every TypeScript block of the documentation must compile against the published declarations
// of tenacious and the real type declarations of fetch, gaxios, @google-cloud/storage and
// @grpc/grpc-js: a snippet that does not type-check would be the first thing a newcomer copies.
// The documents are the README's sections (docs/readme/*.md, from which README.md is built),
// the deeper pages in docs/*.md, and CONTRIBUTING.md and BENCHMARKS.md. Each ```ts block is
// compiled as its own ES module, in memory, beside its document (so it resolves packages from
// the repository's node_modules), importing 'tenacious' by name (the package's own exports map,
// i.e. dist/). A block that is deliberately not TypeScript says what it is (```sh, ```text…):
// a block with no language is refused, so no TypeScript can slip past the check unlabelled.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from './built.js';

const RECIPES = join(ROOT, 'docs/recipes.md');

/** The documents whose code blocks are checked: README sections, docs pages, maintainers' pages. */
function documents(): string[] {
  const inDir = (dir: string): string[] =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(ROOT, dir, name));
  const rootPages = ['CONTRIBUTING.md', 'BENCHMARKS.md'].map((name) => join(ROOT, name)).filter((path) => existsSync(path));
  return [...inDir('docs/readme'), ...inDir('docs'), ...rootPages];
}

/** A fenced block of a markdown document: its language (the word after the fence) and where it starts. */
interface Fence {
  language: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  code: string;
}

/** The fenced blocks of `markdown`, in order. An unclosed fence runs to the end, as on GitHub. */
function fencesOf(markdown: string): Fence[] {
  const fences: Fence[] = [];
  let open: { language: string; line: number; lines: string[] } | undefined;
  markdown.split('\n').forEach((text, i) => {
    const fence = /^```\s*(\S*)/.exec(text);
    if (open === undefined) {
      if (fence !== null) open = { language: fence[1] ?? '', line: i + 1, lines: [] };
    } else if (fence !== null && fence[1] === '') {
      fences.push({ language: open.language, line: open.line, code: `${open.lines.join('\n')}\n` });
      open = undefined;
    } else {
      open.lines.push(text);
    }
  });
  if (open !== undefined) fences.push({ language: open.language, line: open.line, code: open.lines.join('\n') });
  return fences;
}

interface Snippet {
  /** Where the snippet comes from, for error messages. */
  source: string;
  /** The line of `source` where the snippet starts, 1-based. */
  line: number;
  /** The virtual file it is compiled as. */
  fileName: string;
  code: string;
}

/** The TypeScript blocks of one document, each as a virtual .ts file beside it. */
function snippetsOf(path: string): Snippet[] {
  const source = relative(ROOT, path);
  return fencesOf(readFileSync(path, 'utf8'))
    .filter((fence) => fence.language === 'ts' || fence.language === 'typescript')
    .map((fence, i) => ({
      source,
      line: fence.line + 1,
      fileName: join(dirname(path), `${basename(path, '.md')}.block-${i + 1}.ts`),
      code: fence.code,
    }));
}

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  skipLibCheck: true,
  noEmit: true,
};

/** A Node project's settings: no DOM lib, so fetch, Blob and AbortSignal come from @types/node alone. */
const NODE_ONLY: ts.CompilerOptions = { ...OPTIONS, lib: ['lib.es2022.d.ts'] };

/** Type-checks the snippets together; returns the diagnostics in them, each with its source and line. */
function typeCheck(snippets: Snippet[], options: ts.CompilerOptions = OPTIONS): string[] {
  const virtual = new Map<string, string>(snippets.map((s) => [s.fileName, s.code] as const));
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, onError, create) => {
    const text = virtual.get(name);
    return text === undefined ? getSourceFile.call(host, name, language, onError, create) : ts.createSourceFile(name, text, language, true);
  };
  const program = ts.createProgram({ rootNames: snippets.map((s) => s.fileName), options, host });
  return snippets.flatMap((snippet) => {
    const file = program.getSourceFile(snippet.fileName);
    if (file === undefined) return [`${snippet.source}:${snippet.line}: not compiled`];
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
      const { line } = d.start === undefined ? { line: 0 } : file.getLineAndCharacterOfPosition(d.start);
      return `${snippet.source}:${snippet.line + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  });
}

/** A misuse the check must catch, compiled with the recipes: proof that the check is not vacuous. */
const BROKEN: Snippet = {
  source: 'self-check',
  line: 1,
  fileName: join(ROOT, 'docs/readme', 'recipe-self-check.ts'),
  code: "import { retry } from 'tenacious';\nawait retry(() => 1, { maxAtempts: 3 });\n",
};

/** A block still importing retryFetch from the main entry, which exports it no more (tenacious/fetch does). */
const OLD_ENTRY: Snippet = {
  source: 'self-check:entry',
  line: 1,
  fileName: join(ROOT, 'docs/readme', 'recipe-self-check-entry.ts'),
  code: "import { retry } from 'tenacious';\nimport { retryFetch } from 'tenacious';\nawait retry(() => retryFetch('https://example.com/'));\n",
};

describe('the code blocks of the documentation', () => {
  let snippets: Snippet[];
  let errors: string[];
  beforeAll(() => {
    assertBuilt();
    snippets = documents().flatMap(snippetsOf);
    // One program for all: building it (Node's, Storage's and grpc-js's types) is the slow part.
    errors = typeCheck([...snippets, BROKEN, OLD_ENTRY]);
  }, 120_000);

  it('reads the README sections and the docs pages (the check is not vacuous)', () => {
    const sources = new Set(snippets.map((s) => s.source));
    for (const doc of [
      'docs/readme/intro.md',
      'docs/readme/core.md',
      'docs/readme/fetch.md',
      'docs/recipes.md',
      'docs/retry-fetch.md',
      'docs/fleet.md',
    ]) {
      expect(sources, doc).toContain(doc);
    }
  });

  it('labels every fenced block with its language, so no TypeScript escapes the check', () => {
    // BENCHMARKS.md is exempt: its unlabelled blocks are `npm run bench`'s printed report, pasted as is.
    const unlabelled = documents()
      .filter((path) => basename(path) !== 'BENCHMARKS.md')
      .flatMap((path) =>
        fencesOf(readFileSync(path, 'utf8'))
          .filter((fence) => fence.language === '')
          .map((fence) => `${relative(ROOT, path)}:${fence.line}`),
      );
    expect(unlabelled).toEqual([]);
  });

  it('has a recipe for each client and concern in docs/recipes.md, each in TypeScript', () => {
    const all = snippets
      .filter((s) => s.source === relative(ROOT, RECIPES))
      .map((s) => s.code)
      .join('\n');
    for (const needle of [
      "from 'gaxios'",
      "from '@google-cloud/storage'",
      "from '@grpc/grpc-js'",
      "from '@opentelemetry/api'",
      "from 'undici'",
      "from 'got'",
      "from 'ky'",
      "from 'axios'",
      'retryFetch(',
      'AbortSignal',
      'onRetry',
    ]) {
      expect(all, needle).toContain(needle);
    }
  });

  it('shows in the README only recipes that docs/recipes.md holds, where test/clients runs them', () => {
    const normalized = (code: string) => code.replace(/\s+/g, ' ').trim();
    const full = snippets.filter((s) => s.source === 'docs/recipes.md').map((s) => normalized(s.code));
    const inReadme = snippets.filter((s) => s.source === 'docs/readme/recipes.md');
    expect(inReadme.length).toBeGreaterThan(0);
    for (const snippet of inReadme) expect(full, `docs/readme/recipes.md:${snippet.line}`).toContain(normalized(snippet.code));
  });

  it('type-checks every block against the built package and the real client libraries', () => {
    expect(errors.filter((e) => !e.startsWith('self-check:'))).toEqual([]);
  });

  it('keeps one retry layer: a block that retries a client which retries by itself turns its retries off', () => {
    // What each client's own retries are turned off with (README "Recipes and adapters").
    const OWN_RETRIES_OFF: ReadonlyArray<readonly [client: RegExp, off: RegExp]> = [
      [/from '@google-cloud\/storage'/, /autoRetry: false/],
      [/from 'got'/, /retry: \{ limit: 0 \}/],
      [/from 'ky'/, /retry: 0\b/],
    ];
    const offenders = snippets.flatMap((snippet) =>
      OWN_RETRIES_OFF.filter(([client, off]) => client.test(snippet.code) && /\bretry\(/.test(snippet.code) && !off.test(snippet.code)).map(
        ([client]) => `${snippet.source}:${snippet.line}: ${client.source}`,
      ),
    );
    expect(snippets.filter((s) => OWN_RETRIES_OFF.some(([client]) => client.test(s.code))).length).toBeGreaterThanOrEqual(4);
    expect(offenders).toEqual([]);
  });

  it("type-checks the README's blocks in a Node project without the DOM lib, as a server's tsconfig has it", () => {
    const readme = snippets.filter((s) => s.source.startsWith('docs/readme/'));
    expect(readme.length).toBeGreaterThanOrEqual(8);
    expect(typeCheck(readme, NODE_ONLY)).toEqual([]);
  }, 60_000);

  it('would report a block that misuses the API or imports from the wrong entry (the check is not vacuous)', () => {
    const caught = errors.filter((e) => e.startsWith('self-check:'));
    expect(caught).toHaveLength(2);
    expect(caught[0]).toMatch(/^self-check:2: .*maxAtempts/);
    expect(caught[1]).toMatch(/^self-check:entry:2: .*has no exported member .*retryFetch/);
  });
});
