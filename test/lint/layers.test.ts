/**
 * The folder layering of src/, checked on every relative import (type-only ones, re-exports and
 * dynamic `import()` included). A folder is the first path segment under src/; a top-level file
 * (node.ts, cli.ts) is a node of its own.
 *
 * - core/ is pure: it imports nothing outside core/, not even a package or a Node built-in.
 * - control/ is the transport-neutral command path: mqtt/, http/, commands/, cli.ts and node.ts
 *   are adapters over it, so it imports none of them.
 * - drivers/ are IO behind small interfaces: they take what they need as arguments, never the
 *   config.
 * - time/ (Clock, backoff) is a leaf every layer may import: it imports nothing outside itself.
 * - No cycle between folders.
 *
 * ALLOWED_CYCLE_IMPORTS lists the imports that still close a cycle while they wait to be removed,
 * each with why. It may only shrink: an entry whose import is gone, or no longer closes a cycle,
 * fails until it is deleted.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

interface AllowedImport {
  /** The importing file, from the repository root. */
  file: string;
  /** The imported file, from the repository root (`.ts`). */
  imports: string;
  why: string;
}

/**
 * Imports that may close a folder cycle, each with its reason. Empty: no folder cycle is allowed.
 * An entry goes when its import does: the allowlist test below says when.
 */
export const ALLOWED_CYCLE_IMPORTS: readonly AllowedImport[] = [];

/** One import of one file. */
export interface Import {
  /** The importing file, from the repository root. */
  file: string;
  line: number;
  /** As written. */
  specifier: string;
  /** For a relative specifier: the imported file from the repository root (`.js` read as `.ts`). */
  target?: string;
}

const ROOT = join(import.meta.dirname, '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The module specifiers of `text`: import and export declarations, `import()` calls and types. */
function specifiersOf(path: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; line: number }[] = [];
  const add = (literal: ts.Node | undefined) => {
    if (literal === undefined || !ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    found.push({ specifier: literal.text, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0]);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import of `file` (a path from `root`), relative ones resolved. */
export function importsOf(file: string, text: string, root = ROOT): Import[] {
  return specifiersOf(file, text).map(({ specifier, line }) => {
    if (!specifier.startsWith('.')) return { file, line, specifier };
    const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, '.ts');
    return { file, line, specifier, target };
  });
}

/** The layer of a path from the repository root: its folder under src/, or its own name. */
export function layerOf(path: string): string | undefined {
  const [top, first] = path.split('/');
  return top === 'src' ? first : undefined;
}

function describeImport(i: Import): string {
  return `${i.file}:${i.line} imports '${i.specifier}'`;
}

/** The imports that break "`layer` imports nothing from `forbidden`" (a layer, or any package). */
export function forbiddenImports(
  imports: readonly Import[],
  layer: string,
  isForbidden: (i: Import) => boolean,
): string[] {
  return imports.filter((i) => layerOf(i.file) === layer && isForbidden(i)).map(describeImport);
}

/** Folder edges `from -> to` (different folders), each with the imports that make it. */
export function folderGraph(imports: readonly Import[]): Map<string, Map<string, Import[]>> {
  const graph = new Map<string, Map<string, Import[]>>();
  for (const i of imports) {
    const from = layerOf(i.file);
    const to = i.target === undefined ? undefined : layerOf(i.target);
    if (from === undefined || to === undefined || from === to) continue;
    const edges = graph.get(from) ?? graph.set(from, new Map()).get(from)!;
    (edges.get(to) ?? edges.set(to, []).get(to)!).push(i);
  }
  return graph;
}

/** The folders `from` reaches, itself excluded unless a path leads back. */
function reachable(graph: Map<string, Map<string, Import[]>>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(graph.get(from)?.keys() ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(graph.get(next)?.keys() ?? []));
  }
  return seen;
}

/** A shortest path of folders from `from` to `to`, both included; undefined when none. */
function shortestPath(
  graph: Map<string, Map<string, Import[]>>,
  from: string,
  to: string,
): string[] | undefined {
  const previous = new Map<string, string>();
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of graph.get(at)?.keys() ?? []) {
      if (previous.has(next)) continue;
      previous.set(next, at);
      if (next === to) {
        const path = [to];
        for (let back = previous.get(to)!; back !== from; back = previous.get(back)!) path.unshift(back);
        return [from, ...path];
      }
      queue.push(next);
    }
  }
  return undefined;
}

/**
 * One cycle per group of folders that reach each other, as text: the path, then one import
 * per edge (`a -> b -> a` / `  a -> b: src/a/x.ts:3 imports '../b/y.js'`).
 */
export function cyclesOf(graph: Map<string, Map<string, Import[]>>): string[] {
  const reported = new Set<string>();
  const cycles: string[] = [];
  for (const folder of [...graph.keys()].sort()) {
    if (reported.has(folder)) continue;
    const path = shortestPath(graph, folder, folder);
    if (path === undefined) continue;
    for (const other of graph.keys()) {
      if (reachable(graph, folder).has(other) && reachable(graph, other).has(folder)) reported.add(other);
    }
    const edges = path.slice(1).map((to, n) => {
      const from = path[n]!;
      return `  ${from} -> ${to}: ${describeImport(graph.get(from)!.get(to)![0]!)}`;
    });
    cycles.push([path.join(' -> '), ...edges].join('\n'));
  }
  return cycles;
}

const allowedKey = (file: string, target: string) => `${file} -> ${target}`;

/** What is wrong with the allowlist: an entry whose import is gone or closes no cycle any more. */
export function staleAllowances(imports: readonly Import[], allowed: readonly AllowedImport[]): string[] {
  const graph = folderGraph(imports);
  return allowed.flatMap((entry) => {
    const present = imports.some((i) => i.file === entry.file && i.target === entry.imports);
    if (!present)
      return [`${allowedKey(entry.file, entry.imports)}: no such import any more, delete the entry`];
    const from = layerOf(entry.file)!;
    const to = layerOf(entry.imports)!;
    if (from === to || !reachable(graph, to).has(from)) {
      return [`${allowedKey(entry.file, entry.imports)}: closes no folder cycle any more, delete the entry`];
    }
    return [];
  });
}

function sourceImports(): Import[] {
  return tsFiles(join(ROOT, 'src')).flatMap((path) =>
    importsOf(relative(ROOT, path), readFileSync(path, 'utf8')),
  );
}

const failureText = (what: string, found: readonly string[]) =>
  `${what}:\n${found.map((line) => `  ${line}`).join('\n')}`;

describe('the layering of src/', () => {
  const imports = sourceImports();
  const layerOfTarget = (i: Import) => (i.target === undefined ? undefined : layerOf(i.target));

  test('the scan finds the imports (a sanity check of the parser)', () => {
    assert.ok(imports.length > 500, `only ${imports.length} imports found`);
    assert.ok(imports.some((i) => i.file === 'src/node.ts' && layerOfTarget(i) === 'daemon'));
  });

  test('core/ imports nothing outside core/ (no other folder, no package, no built-in)', () => {
    const found = forbiddenImports(imports, 'core', (i) => layerOfTarget(i) !== 'core');
    assert.deepEqual(found, [], failureText('core/ is pure, yet', found));
  });

  test('control/ imports no transport (mqtt/, http/, commands/, cli.ts, node.ts)', () => {
    const transports = new Set(['mqtt', 'http', 'commands', 'cli.ts', 'node.ts']);
    const found = forbiddenImports(imports, 'control', (i) => transports.has(layerOfTarget(i) ?? ''));
    assert.deepEqual(found, [], failureText('control/ is transport-neutral, yet', found));
  });

  test('drivers/ import nothing from config/', () => {
    const found = forbiddenImports(imports, 'drivers', (i) => layerOfTarget(i) === 'config');
    assert.deepEqual(found, [], failureText('drivers/ take their settings as arguments, yet', found));
  });

  test('time/ imports nothing outside time/ (a leaf every layer may import)', () => {
    const found = forbiddenImports(
      imports,
      'time',
      (i) => i.target !== undefined && layerOfTarget(i) !== 'time',
    );
    assert.deepEqual(found, [], failureText('time/ is a leaf, yet', found));
  });

  test('no cycle between folders (ALLOWED_CYCLE_IMPORTS aside)', () => {
    const allowed = new Set(ALLOWED_CYCLE_IMPORTS.map((a) => allowedKey(a.file, a.imports)));
    const checked = imports.filter(
      (i) => i.target === undefined || !allowed.has(allowedKey(i.file, i.target)),
    );
    const cycles = cyclesOf(folderGraph(checked));
    assert.deepEqual(
      cycles,
      [],
      `folder cycles (one import per edge; break one edge of each):\n${cycles.join('\n')}`,
    );
  });

  test('every entry of ALLOWED_CYCLE_IMPORTS is still needed (the list only shrinks)', () => {
    const stale = staleAllowances(imports, ALLOWED_CYCLE_IMPORTS);
    assert.deepEqual(stale, [], failureText('ALLOWED_CYCLE_IMPORTS', stale));
  });
});

describe('the checker', () => {
  const files: Record<string, string> = {
    'src/a/x.ts': "import { y } from '../b/y.js';\nexport type { Z } from './z.js';",
    'src/b/y.ts': "import type { X } from '../a/x.js';\nconst c = await import('../c.js');",
    'src/c.ts': "import { readFileSync } from 'node:fs';",
  };
  const imports = Object.entries(files).flatMap(([file, text]) => importsOf(file, text, '/repo'));

  test('reads type-only imports, re-exports, dynamic imports and packages', () => {
    assert.deepEqual(
      imports.map((i) => `${i.file}:${i.line} ${i.specifier} ${i.target ?? '(package)'}`),
      [
        'src/a/x.ts:1 ../b/y.js src/b/y.ts',
        'src/a/x.ts:2 ./z.js src/a/z.ts',
        'src/b/y.ts:1 ../a/x.js src/a/x.ts',
        'src/b/y.ts:2 ../c.js src/c.ts',
        'src/c.ts:1 node:fs (package)',
      ],
    );
  });

  test('a top-level file is its own layer', () => {
    assert.deepEqual(['src/node.ts', 'src/core/pid.ts', 'test/x.ts'].map(layerOf), [
      'node.ts',
      'core',
      undefined,
    ]);
  });

  test('a cycle is reported with its path and one import per edge', () => {
    assert.deepEqual(cyclesOf(folderGraph(imports)), [
      "a -> b -> a\n  a -> b: src/a/x.ts:1 imports '../b/y.js'\n  b -> a: src/b/y.ts:1 imports '../a/x.js'",
    ]);
  });

  test('an allowed import that is gone, or closes no cycle, is stale', () => {
    const allowed = [
      { file: 'src/b/y.ts', imports: 'src/a/x.ts', why: 'in a cycle' },
      { file: 'src/b/y.ts', imports: 'src/c.ts', why: 'no cycle' },
      { file: 'src/a/x.ts', imports: 'src/c.ts', why: 'gone' },
    ];
    assert.deepEqual(staleAllowances(imports, allowed), [
      'src/b/y.ts -> src/c.ts: closes no folder cycle any more, delete the entry',
      'src/a/x.ts -> src/c.ts: no such import any more, delete the entry',
    ]);
  });
});
