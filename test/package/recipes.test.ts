// The README's recipes must compile against the published declarations of tenacious and the
// real type declarations of fetch, gaxios, @google-cloud/storage and @grpc/grpc-js: a recipe
// that does not type-check would be the first thing a newcomer copies. Each ```ts block of
// docs/readme/recipes.md is compiled as its own ES module, in memory, next to the repository's
// node_modules, importing 'tenacious' by name (the package's own exports map, i.e. dist/).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from './built.js';

const RECIPES = join(ROOT, 'docs/readme/recipes.md');

/**
 * @opentelemetry/api is not a devDependency, so its recipe is checked against this excerpt of
 * its declarations (v1: trace.getTracer, Tracer.startActiveSpan, Span.addEvent,
 * recordException, setStatus, end). It checks tenacious's side of that recipe; OpenTelemetry's
 * side holds only as far as this excerpt matches the real package.
 */
const OTEL_API_EXCERPT = `
export type AttributeValue = string | number | boolean | Array<null | undefined | string> | Array<null | undefined | number> | Array<null | undefined | boolean>;
export interface Attributes { [key: string]: AttributeValue | undefined }
export type Exception = string | { code?: string | number; message?: string; name?: string; stack?: string };
export declare enum SpanStatusCode { UNSET = 0, OK = 1, ERROR = 2 }
export interface SpanStatus { code: SpanStatusCode; message?: string }
export interface Span {
  addEvent(name: string, attributesOrStartTime?: Attributes | number | Date, startTime?: number | Date): this;
  recordException(exception: Exception, time?: number | Date): void;
  setStatus(status: SpanStatus): this;
  end(endTime?: number | Date): void;
}
export interface Tracer {
  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
}
export declare const trace: { getTracer(name: string, version?: string): Tracer };
`;
const OTEL_PATH = join(ROOT, 'node_modules/.virtual/opentelemetry-api.d.ts');

interface Snippet {
  /** Where the snippet comes from, for error messages. */
  source: string;
  /** The line of `source` where the snippet starts, 1-based. */
  line: number;
  /** The virtual file it is compiled as. */
  fileName: string;
  code: string;
}

function snippetsOf(markdown: string): Snippet[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match, i) => ({
    source: 'recipes.md',
    line: markdown.slice(0, match.index).split('\n').length + 1,
    // Beside recipes.md, so 'gaxios' and friends resolve from the repository's node_modules.
    fileName: join(ROOT, 'docs/readme', `recipe-${i + 1}.ts`),
    code: match[1] ?? '',
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
  paths: { '@opentelemetry/api': [OTEL_PATH] },
};

/** Type-checks the snippets together; returns the diagnostics in them, each with its source and line. */
function typeCheck(snippets: Snippet[]): string[] {
  const virtual = new Map<string, string>([[OTEL_PATH, OTEL_API_EXCERPT], ...snippets.map((s) => [s.fileName, s.code] as const)]);
  const host = ts.createCompilerHost(OPTIONS, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, onError, create) => {
    const text = virtual.get(name);
    return text === undefined ? getSourceFile.call(host, name, language, onError, create) : ts.createSourceFile(name, text, language, true);
  };
  const program = ts.createProgram({ rootNames: snippets.map((s) => s.fileName), options: OPTIONS, host });
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

describe('docs/readme/recipes.md', () => {
  let snippets: Snippet[];
  let errors: string[];
  beforeAll(() => {
    assertBuilt();
    snippets = snippetsOf(readFileSync(RECIPES, 'utf8'));
    // One program for all: building it (Node's, Storage's and grpc-js's types) is the slow part.
    errors = typeCheck([...snippets, BROKEN]);
  }, 60_000);

  it('has a recipe for each client and concern, each in TypeScript', () => {
    const all = snippets.map((s) => s.code).join('\n');
    for (const needle of ["from 'gaxios'", "from '@google-cloud/storage'", "from '@grpc/grpc-js'", "from '@opentelemetry/api'", 'retryFetch(', 'AbortSignal', 'onRetry']) {
      expect(all, needle).toContain(needle);
    }
  });

  it('type-checks every recipe against the built package and the real client libraries', () => {
    expect(errors.filter((e) => !e.startsWith('self-check:'))).toEqual([]);
  });

  it('would report a recipe that misuses the API (the check is not vacuous)', () => {
    const caught = errors.filter((e) => e.startsWith('self-check:'));
    expect(caught).toHaveLength(1);
    expect(caught[0]).toMatch(/^self-check:2: .*maxAtempts/);
  });
});
