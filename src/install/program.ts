/**
 * The program directory (/opt/homeostat): a copy of the checkout the installer runs from,
 * holding what the daemon needs at run time and nothing else: dist/, dashboard/, systemd/,
 * config/, package.json, package-lock.json and the production node_modules (the lock's
 * packages without `"dev": true`), native addons built (better-sqlite3's build/Release)
 * without their compiler intermediates.
 *
 * Copying is a sync: a file whose size and mtime match is taken as equal, one whose size
 * matches is compared byte by byte, and only what differs is replaced (atomically: see
 * files.ts); what the source no longer has is deleted. A second run therefore changes nothing,
 * and an update after `git pull && npm ci` replaces only what changed.
 */
import {
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fixAttributes, lstatOrUndefined, type Owner, setTimes, writeAtomic } from './files.js';
import { PROGRAM_ENTRIES } from './layout.js';
import type { Step } from './steps.js';

export interface SourceEntry {
  kind: 'dir' | 'file' | 'symlink';
  /** Absolute path in the source. */
  from: string;
  stats: Stats;
  /** A symbolic link's target, as written. */
  target?: string;
}

/** Relative path (`dist/cli.js`, `node_modules/yaml/package.json`) → entry; parents come first. */
export type Manifest = Map<string, SourceEntry>;

interface LockPackage {
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
}

/** Compiler output a built addon leaves beside its .node file: not needed to load it. */
const BUILD_INTERMEDIATES = /(^|\/)build\/(.*\/)?(obj|obj\.target|\.deps)$/;
/** The native addon every install needs (the database); missing means npm ci did not build it. */
const SQLITE_ADDON = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
/** Mtimes this close are the same (utimes rounds through a double of seconds: seen 1.2 µs). */
export const MTIME_TOLERANCE_MS = 0.01;
/** The executable the link and the unit run. */
export const CLI_ENTRY = 'dist/cli.js';

/**
 * The lock's production packages (`node_modules/…` paths), each with whether it may be
 * missing (optional, or only optional in production: npm leaves out those for other platforms).
 */
export function productionPackages(lockText: string): Array<{ path: string; optional: boolean }> {
  const lock = JSON.parse(lockText) as { packages?: Record<string, LockPackage> };
  if (lock.packages === undefined) {
    throw new Error('package-lock.json has no "packages" (lockfileVersion 2 or later is needed)');
  }
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true)
    .map(([path, entry]) => ({ path, optional: entry.optional === true || entry.devOptional === true }));
}

/**
 * Everything the program directory must hold, read from `sourceDir` (a checkout after
 * `npm ci`). Throws, before anything is installed, when the build or a dependency is missing.
 */
export function programManifest(sourceDir: string): Manifest {
  const manifest: Manifest = new Map();
  for (const entry of PROGRAM_ENTRIES) {
    const from = join(sourceDir, entry);
    if (lstatOrUndefined(from) === undefined) {
      const hint = entry === 'dist' ? ': run `npm ci` there (it builds dist/)' : '';
      throw new Error(`${from} is missing${hint}`);
    }
    walk(manifest, from, entry);
  }
  if (lstatOrUndefined(join(sourceDir, CLI_ENTRY)) === undefined) {
    throw new Error(`${join(sourceDir, CLI_ENTRY)} is missing: run \`npm ci\` (or \`npm run build\`) there`);
  }
  const packages = productionPackages(readFileSync(join(sourceDir, 'package-lock.json'), 'utf8'));
  for (const { path, optional } of packages) {
    const from = join(sourceDir, path);
    const stats = lstatOrUndefined(from);
    if (stats === undefined) {
      if (optional) continue;
      throw new Error(`${from} is missing: run \`npm ci\` in ${sourceDir} first`);
    }
    addParents(manifest, sourceDir, path);
    // A linked package (workspace, `npm link`) is copied as the directory it points to.
    walk(manifest, stats.isSymbolicLink() ? realpathSync(from) : from, path);
  }
  if (packages.some((p) => p.path === 'node_modules/better-sqlite3') && !manifest.has(SQLITE_ADDON)) {
    throw new Error(
      `${join(sourceDir, SQLITE_ADDON)} is missing: the native addon was not built. ` +
        'Install the build tools (sudo apt-get install -y build-essential python3), then run `npm ci` again',
    );
  }
  return new Map([...manifest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Adds `from` (at `rel`) and, for a directory, everything below it but nested node_modules. */
function walk(manifest: Manifest, from: string, rel: string): void {
  const stats = lstatSync(from);
  if (stats.isSymbolicLink()) {
    manifest.set(rel, { kind: 'symlink', from, stats, target: readlinkSync(from) });
    return;
  }
  if (stats.isFile()) {
    manifest.set(rel, { kind: 'file', from, stats });
    return;
  }
  if (!stats.isDirectory()) return; // sockets, pipes: nothing a program needs
  manifest.set(rel, { kind: 'dir', from, stats });
  for (const name of readdirSync(from)) {
    const childRel = `${rel}/${name}`;
    // Nested packages are lock entries of their own (maybe dev ones), and so is what their
    // .bin links to: node_modules/.bin and node_modules/x/node_modules/.bin are never copied.
    if (name === 'node_modules') continue;
    if (BUILD_INTERMEDIATES.test(childRel)) continue;
    walk(manifest, join(from, name), childRel);
  }
}

/** `node_modules`, `node_modules/@scope`, `node_modules/a/node_modules` as directories. */
function addParents(manifest: Manifest, sourceDir: string, rel: string): void {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const parent = parts.slice(0, i).join('/');
    if (!manifest.has(parent)) {
      const from = join(sourceDir, parent);
      manifest.set(parent, { kind: 'dir', from, stats: lstatSync(from) });
    }
  }
}

/** Files 0644, executables (dist/cli.js, and whatever the source marks executable) 0755. */
function fileMode(rel: string, stats: Stats): number {
  return rel === CLI_ENTRY || (stats.mode & 0o111) !== 0 ? 0o755 : 0o644;
}

/** Everything below `dir` (relative paths, parents first), without following links. */
function listTree(dir: string, rel = '', into = new Map<string, Stats>()): Map<string, Stats> {
  for (const name of readdirSync(dir)) {
    const childRel = rel === '' ? name : `${rel}/${name}`;
    const stats = lstatSync(join(dir, name));
    into.set(childRel, stats);
    if (stats.isDirectory()) listTree(join(dir, name), childRel, into);
  }
  return into;
}

function kindOf(stats: Stats): SourceEntry['kind'] | 'other' {
  return stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'dir' : stats.isFile() ? 'file' : 'other';
}

function sameContent(a: string, b: string): boolean {
  return readFileSync(a).equals(readFileSync(b));
}

/**
 * Makes `destDir` hold exactly `manifest`, root-owned (directories 0755, files 0644 or 0755).
 * One step: created, updated (with counts) or unchanged.
 */
export function syncProgram(manifest: Manifest, destDir: string, display: string, owner: Owner): Step {
  const existed = lstatOrUndefined(destDir);
  if (existed !== undefined && !existed.isDirectory()) throw new Error(`${display} is not a directory`);
  if (existed === undefined) mkdirSync(destDir, { recursive: true, mode: 0o755 });
  const rootChanges = fixAttributes(destDir, lstatSync(destDir), 0o755, owner);
  const removed = removeUnwanted(manifest, destDir);
  let copied = 0;
  let fixed = 0;
  for (const [rel, entry] of manifest) {
    const change = syncEntry(rel, entry, destDir, owner);
    if (change === 'copied') copied++;
    if (change === 'fixed') fixed++;
  }
  fixed += fixLinkOwners(manifest, destDir, owner);

  const files = [...manifest.values()].filter((e) => e.kind !== 'dir').length;
  if (existed === undefined)
    return { change: 'created', what: display, detail: `${files} files, root-owned` };
  if (copied === 0 && removed === 0 && fixed === 0 && rootChanges.length === 0) {
    return { change: 'unchanged', what: display, detail: `${files} files` };
  }
  const parts = [
    copied > 0 ? `${copied} copied` : '',
    removed > 0 ? `${removed} removed` : '',
    fixed > 0 ? `${fixed} modes or owners fixed` : '',
    ...rootChanges,
  ].filter((part) => part !== '');
  return { change: 'updated', what: display, detail: parts.join(', ') };
}

/**
 * Deletes whatever the source does not have (or has as another kind); a removed directory
 * takes its children with it. Returns how many paths it removed.
 */
function removeUnwanted(manifest: Manifest, destDir: string): number {
  let removed = 0;
  for (const [rel, stats] of listTree(destDir)) {
    const wanted = manifest.get(rel);
    if (wanted !== undefined && wanted.kind === kindOf(stats)) continue;
    // Already gone with a parent directory removed before it.
    if (lstatOrUndefined(join(destDir, rel)) === undefined) continue;
    rmSync(join(destDir, rel), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** What syncing one entry did: copied (created or replaced), only its mode or owner fixed, or nothing. */
type EntryChange = 'copied' | 'fixed' | undefined;

/** Brings one manifest entry at `destDir/rel` to the source's (after removeUnwanted: same kind or absent). */
function syncEntry(rel: string, entry: SourceEntry, destDir: string, owner: Owner): EntryChange {
  const to = join(destDir, rel);
  const current = lstatOrUndefined(to);
  if (entry.kind === 'dir') {
    if (current === undefined) {
      mkdirSync(to, { mode: 0o755 });
      fixAttributes(to, lstatSync(to), 0o755, owner);
      return 'copied';
    }
    return fixAttributes(to, current, 0o755, owner).length > 0 ? 'fixed' : undefined;
  }
  if (entry.kind === 'symlink') {
    if (current !== undefined && readlinkSync(to) === entry.target) return undefined;
    const temporary = `${to}.homeostat-new`;
    rmSync(temporary, { force: true });
    symlinkSync(entry.target!, temporary);
    renameSync(temporary, to);
    return 'copied';
  }
  return syncFile(rel, entry, to, current, owner);
}

/**
 * A file: copied when its size differs, or its mtime and then its bytes do; else only its mode
 * and owner fixed where they differ.
 */
function syncFile(
  rel: string,
  entry: SourceEntry,
  to: string,
  current: Stats | undefined,
  owner: Owner,
): EntryChange {
  const mode = fileMode(rel, entry.stats);
  if (current === undefined || current.size !== entry.stats.size) {
    writeAtomic(to, { copyFrom: entry.from }, mode, owner, entry.stats);
    return 'copied';
  }
  // utimes takes seconds as a double, so the copy's mtime can be a microsecond or two off.
  if (Math.abs(current.mtimeMs - entry.stats.mtimeMs) >= MTIME_TOLERANCE_MS) {
    if (!sameContent(entry.from, to)) {
      writeAtomic(to, { copyFrom: entry.from }, mode, owner, entry.stats);
      return 'copied';
    }
    // Same bytes (npm ci rewrote an unchanged file): align the mtime so that the next
    // run need not read it again. Not a change of the program.
    setTimes(to, entry.stats);
  }
  return fixAttributes(to, current, mode, owner).length > 0 ? 'fixed' : undefined;
}

/**
 * Links are created by root: only their owner could differ, and only after a hand edit.
 * Returns how many it fixed.
 */
function fixLinkOwners(manifest: Manifest, destDir: string, owner: Owner): number {
  let fixed = 0;
  for (const [rel] of manifest) {
    if (manifest.get(rel)?.kind === 'symlink') {
      const stats = lstatSync(join(destDir, rel));
      if (stats.uid !== owner.uid || stats.gid !== owner.gid) {
        lchownSync(join(destDir, rel), owner.uid, owner.gid);
        fixed++;
      }
    }
  }
  return fixed;
}
