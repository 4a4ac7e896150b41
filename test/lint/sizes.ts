/**
 * The house's size limits, checked by `npm run lint`: no source file (src/, dashboard/) over
 * 400 lines, no function over 60. What is over them today is listed in sizes-allowlist.json
 * with its size then and why it stays; a listed file or function may shrink, never grow, and a
 * new one over a limit fails. Functions are found with the TypeScript parser (declarations,
 * methods, accessors, constructors, function expressions and arrows); a function's lines run
 * from its first line to its last, nested functions included.
 *
 *   node --import tsx test/lint/sizes.ts           check (exit 1 on a breach)
 *   node --import tsx test/lint/sizes.ts --list    print every file and function over a limit
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 60;

export interface Oversize {
  /** `file` or `function <name>` (the name as `Class.method`, or `<anonymous>@line`). */
  what: string;
  path: string;
  lines: number;
}

interface AllowEntry extends Oversize {
  why: string;
}

const ROOT = join(import.meta.dirname, '../..');
const SOURCE_DIRS = ['src', 'dashboard'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The line count of `text` as an editor shows it (a final newline adds no line). */
function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const named = (node as { name?: ts.Node }).name;
  let name = named && ts.isIdentifier(named) ? named.text : undefined;
  if (ts.isConstructorDeclaration(node)) name = 'constructor';
  if (name === undefined && ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name)) {
    name = node.parent.name.text;
  }
  if (name === undefined && ts.isPropertyAssignment(node.parent) && ts.isIdentifier(node.parent.name)) {
    name = node.parent.name.text;
  }
  const owner = ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
  return name === undefined ? `<anonymous>@${line}` : `${owner}${name}`;
}

/** Every file and function of `text` over its limit. */
export function oversizesOf(path: string, text: string): Oversize[] {
  const found: Oversize[] = [];
  const fileLines = lineCount(text);
  if (fileLines > MAX_FILE_LINES) found.push({ what: 'file', path, lines: fileLines });
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        found.push({ what: `function ${functionName(node, source)}`, path, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function oversizesInTree(root = ROOT): Oversize[] {
  return SOURCE_DIRS.flatMap((dir) => sourceFiles(join(root, dir))).flatMap((file) =>
    oversizesOf(relative(root, file), readFileSync(file, 'utf8')),
  );
}

const keyOf = (o: Oversize) => `${o.path} ${o.what}`;

/** One line per breach: over a limit and not listed, or listed and grown. */
export function breaches(found: readonly Oversize[], allowed: readonly AllowEntry[]): string[] {
  const allowedByKey = new Map(allowed.map((entry) => [keyOf(entry), entry]));
  return found.flatMap((o) => {
    const limit = o.what === 'file' ? MAX_FILE_LINES : MAX_FUNCTION_LINES;
    const entry = allowedByKey.get(keyOf(o));
    if (entry === undefined) return [`${o.path}: ${o.what} is ${o.lines} lines (limit ${limit}): reshape it`];
    if (o.lines > entry.lines) {
      return [
        `${o.path}: ${o.what} grew to ${o.lines} lines (allowed ${entry.lines} while it waits: ${entry.why})`,
      ];
    }
    return [];
  });
}

function main(): number {
  const found = oversizesInTree();
  if (process.argv.includes('--list')) {
    for (const o of found) console.log(`${o.lines}\t${o.path}\t${o.what}`);
    return 0;
  }
  const allowed = JSON.parse(
    readFileSync(join(import.meta.dirname, 'sizes-allowlist.json'), 'utf8'),
  ) as AllowEntry[];
  const problems = breaches(found, allowed);
  for (const line of problems) console.error(line);
  const stale = allowed.filter((entry) => !found.some((o) => keyOf(o) === keyOf(entry)));
  for (const entry of stale)
    console.error(`sizes-allowlist.json: ${keyOf(entry)} is within the limits now: remove its entry`);
  if (problems.length === 0 && stale.length === 0) {
    console.log(
      `sizes: ${found.length} over the limits, each listed in test/lint/sizes-allowlist.json and not grown`,
    );
    return 0;
  }
  return 1;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) process.exitCode = main();
