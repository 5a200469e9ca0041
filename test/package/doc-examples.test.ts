// The project's rule: every public export has a doc comment with an `@example`, because the
// API reference (`npm run docs`) and editors' hovers are where users read them. TypeDoc checks
// that a comment exists; this checks the example, from the TypeScript declarations themselves.
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENTRIES, ROOT } from './built.js';

interface Finding {
  name: string;
  file: string;
  problem: string;
}

/** Every export of `entry` whose declaration lacks a doc comment or a non-empty `@example`. */
function undocumentedExports(entry: string): { exported: number; findings: Finding[] } {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${entry} did not compile to a module`);
  const exports = checker.getExportsOfModule(module);
  const findings = exports.flatMap((symbol): Finding[] => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const file = target.declarations?.[0]?.getSourceFile().fileName.replace(`${ROOT}/`, '') ?? '?';
    const comment = ts.displayPartsToString(target.getDocumentationComment(checker)).trim();
    const examples = target.getJsDocTags(checker).filter((tag) => tag.name === 'example');
    if (comment === '') return [{ name: symbol.name, file, problem: 'no doc comment' }];
    if (!examples.some((tag) => ts.displayPartsToString(tag.text).trim() !== '')) {
      return [{ name: symbol.name, file, problem: 'no @example' }];
    }
    return [];
  });
  return { exported: exports.length, findings };
}

/** At least this many exports per entry: proof that the entry was read, not an empty module. */
const LEAST_EXPORTS: Record<(typeof ENTRIES)[number]['specifier'], number> = {
  tenacious: 40,
  'tenacious/fetch': 5,
  'tenacious/google': 20,
  'tenacious/otel': 3,
  'tenacious/undici': 4,
  'tenacious/grpc': 4,
  'tenacious/tanstack-query': 3,
  'tenacious/axios': 5,
  'tenacious/redis': 4,
  'tenacious/testing': 14,
};

describe('the public API documentation', () => {
  it.each(ENTRIES)(
    'gives every export of $source ($specifier) a doc comment with an @example',
    ({ specifier, source }) => {
      const { exported, findings } = undocumentedExports(join(ROOT, source));
      expect(exported).toBeGreaterThanOrEqual(LEAST_EXPORTS[specifier]);
      expect(findings.map(({ name, file, problem }) => `${name} (${file}): ${problem}`)).toEqual([]);
    },
    30_000,
  );
});
