/**
 * Idempotent file operations: each compares first and touches only what differs, so a second
 * install changes no file, mode, owner or mtime. Content is replaced by writing a temporary
 * file beside it and renaming it over: a running daemon that has a file open or mapped (a
 * native addon) keeps its old copy instead of seeing it change under it.
 */
import {
  chmodSync,
  chownSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDirectory, fsyncFile } from '../durable-file.js';
import type { Step } from './steps.js';

/** Owner ids and how to print them (`root:homeostat`). */
export interface Owner {
  uid: number;
  gid: number;
  label: string;
}

export const ROOT_OWNER: Owner = { uid: 0, gid: 0, label: 'root:root' };

export function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Sets mode and owner where they differ; returns what it changed (empty: nothing). */
export function fixAttributes(path: string, stats: Stats, mode: number, owner: Owner): string[] {
  const changes: string[] = [];
  if ((stats.mode & 0o7777) !== mode) {
    chmodSync(path, mode);
    changes.push(`mode ${octal(stats.mode)} → ${octal(mode)}`);
  }
  if (stats.uid !== owner.uid || stats.gid !== owner.gid) {
    chownSync(path, owner.uid, owner.gid);
    changes.push(`owner ${stats.uid}:${stats.gid} → ${owner.label}`);
  }
  return changes;
}

/** A directory with this mode and owner; parents that are missing are created 0755 root. */
export function ensureDir(path: string, display: string, mode: number, owner: Owner): Step {
  const stats = lstatOrUndefined(path);
  const wanted = `${octal(mode)} ${owner.label}`;
  if (stats === undefined) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    mkdirSync(path, { mode });
    chmodSync(path, mode); // mkdir's mode is filtered by the umask
    chownSync(path, owner.uid, owner.gid);
    return { change: 'created', what: display, detail: wanted };
  }
  if (!stats.isDirectory()) throw new Error(`${display} exists and is not a directory`);
  const changes = fixAttributes(path, stats, mode, owner);
  return changes.length === 0
    ? { change: 'unchanged', what: display, detail: wanted }
    : { change: 'updated', what: display, detail: changes.join(', ') };
}

/**
 * Puts `data` at `path` through a temporary file and a rename, with its mode, owner and (when
 * given) mtime set before it appears.
 */
export function writeAtomic(
  path: string,
  data: { content: string | Buffer } | { copyFrom: string },
  mode: number,
  owner: Owner,
  mtime?: { atimeMs: number; mtimeMs: number },
): void {
  const temporary = `${path}.homeostat-new`;
  rmSync(temporary, { force: true });
  if ('content' in data) writeFileSync(temporary, data.content, { mode });
  else copyFileSync(data.copyFrom, temporary);
  chmodSync(temporary, mode);
  chownSync(temporary, owner.uid, owner.gid);
  if (mtime) setTimes(temporary, mtime);
  // A power cut right after the install must find the old file or the new one, never an empty
  // one: the data on disk before the rename, the rename on disk before we return.
  fsyncFile(temporary);
  renameSync(temporary, path);
  fsyncDirectory(dirname(path));
}

export function setTimes(path: string, times: { atimeMs: number; mtimeMs: number }): void {
  // Seconds as numbers keep sub-millisecond precision (a Date would not).
  utimesSync(path, times.atimeMs / 1000, times.mtimeMs / 1000);
}

/** A file with exactly `content`, mode and owner; rewritten only when the content differs. */
export function ensureFile(path: string, display: string, content: string, mode: number, owner: Owner): Step {
  const stats = lstatOrUndefined(path);
  const wanted = `${octal(mode)} ${owner.label}`;
  if (stats === undefined) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    writeAtomic(path, { content }, mode, owner);
    return { change: 'created', what: display, detail: wanted };
  }
  if (!stats.isFile()) throw new Error(`${display} exists and is not a regular file`);
  if (readFileSync(path, 'utf8') !== content) {
    writeAtomic(path, { content }, mode, owner);
    return { change: 'updated', what: display, detail: `new content, ${wanted}` };
  }
  const changes = fixAttributes(path, stats, mode, owner);
  return changes.length === 0
    ? { change: 'unchanged', what: display, detail: wanted }
    : { change: 'updated', what: display, detail: changes.join(', ') };
}

/**
 * A symbolic link at `path` pointing to `target`. An existing link elsewhere is replaced; a
 * file or directory there is not ours and is left alone (an error says so).
 */
export function ensureSymlink(path: string, display: string, target: string): Step {
  const stats = lstatOrUndefined(path);
  if (stats !== undefined && !stats.isSymbolicLink()) {
    throw new Error(`${display} exists and is not a symbolic link: move it away, then install again`);
  }
  if (stats !== undefined && readlinkSync(path) === target) {
    return { change: 'unchanged', what: display, detail: `→ ${target}` };
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const temporary = `${path}.homeostat-new`;
  rmSync(temporary, { force: true });
  symlinkSync(target, temporary);
  renameSync(temporary, path);
  return { change: stats === undefined ? 'created' : 'updated', what: display, detail: `→ ${target}` };
}

/** Removes a file, link or directory tree; absent is "unchanged". */
export function removePath(path: string, display: string): Step {
  const stats = lstatOrUndefined(path);
  if (stats === undefined) return { change: 'unchanged', what: display, detail: 'not there' };
  if (stats.isDirectory()) rmSync(path, { recursive: true, force: true });
  else unlinkSync(path);
  return { change: 'removed', what: display };
}

/** Removes the link only when it points to `target` (someone else's file stays). */
export function removeOwnSymlink(path: string, display: string, target: string): Step {
  const stats = lstatOrUndefined(path);
  if (stats === undefined) return { change: 'unchanged', what: display, detail: 'not there' };
  if (!stats.isSymbolicLink() || readlinkSync(path) !== target) {
    return { change: 'kept', what: display, detail: `not a link to ${target}: not ours` };
  }
  unlinkSync(path);
  return { change: 'removed', what: display };
}
