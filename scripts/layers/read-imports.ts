import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseSync } from 'oxc-parser';

/** One import of a file: the file it names (absolute) and whether it is for types only. */
export interface ImportEdge {
  to: string;
  typeOnly: boolean;
}

/**
 * The relative imports of one TypeScript file: static imports, re-exports, and dynamic `import()`
 * of a string literal, each resolved to an absolute path. Package imports are left out (they are
 * no layer of ours). Read with oxc-parser, the parser oxlint and oxfmt are built on: the check
 * sees exactly the module syntax the linter does, type-only imports included.
 */
export function readImports(file: string, source = readFileSync(file, 'utf8')): ImportEdge[] {
  const { module } = parseSync(file, source);
  const edges: ImportEdge[] = [];
  const add = (request: string | undefined, typeOnly: boolean) => {
    if (request?.startsWith('.')) edges.push({ to: resolve(dirname(file), request), typeOnly });
  };
  for (const entry of module.staticImports) {
    // `import './x.ts'` has no entries: it runs the module, so it is a value import.
    const typeOnly = entry.entries.length > 0 && entry.entries.every((e) => e.isType);
    add(entry.moduleRequest.value, typeOnly);
  }
  for (const entry of module.staticExports) {
    for (const e of entry.entries) add(e.moduleRequest?.value, e.isType);
  }
  for (const entry of module.dynamicImports) {
    const literal = source.slice(entry.moduleRequest.start, entry.moduleRequest.end);
    const quoted = /^(['"`])(.*)\1$/s.exec(literal);
    if (quoted) add(quoted[2], false);
  }
  return edges;
}
