/**
 * Stable names for kernel device files whose directories are numbered at boot: a path pattern
 * under `/sys/bus/i2c/devices/1-0076/` with `iio:device*` in place of `iio:device0` (the
 * `iio:deviceN` and `hwmonN` numbers follow probe order, which changes between boots; the bus
 * address does not). Only `*` (any run of characters) and `?` (one character) within one path segment, as a
 * shell matches them; no `**`, no `[...]`, no braces: enough for sysfs and small enough to read.
 *
 * Synchronous on purpose: a sysfs directory listing is in memory and answers in microseconds,
 * and the callers (a driver's read, doctor, init) want the answer before they read the file.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What the expansion may use of the file system; tests pass the real one over a fixture tree. */
export interface GlobFs {
  readdir(dir: string): string[];
  isFile(path: string): boolean;
  exists(path: string): boolean;
}

/** The real file system: statSync follows symlinks, as sysfs's bus/devices entries are. */
export const nodeGlobFs: GlobFs = {
  readdir: (dir) => readdirSync(dir),
  isFile: (path) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false,
  exists: (path) => statSync(path, { throwIfNoEntry: false }) !== undefined,
};

/** Whether `path` holds a wildcard (`*` or `?`), i.e. names files by pattern. */
export function hasWildcard(path: string): boolean {
  return /[*?]/.test(path);
}

/** Why `pattern` is not one this module expands, or undefined when it is. */
export function patternProblem(pattern: string): string | undefined {
  if (!pattern.startsWith('/')) return 'must be an absolute path';
  if (pattern.includes('**')) return '** is not supported: use * within one path segment';
  if (/[[\]{}]/.test(pattern)) return 'only * and ? are wildcards here ([...] and {...} are not)';
  const last = pattern.split('/').pop() ?? '';
  if (last === '') return 'must name a file, not end in /';
  return undefined;
}

/** A regular expression for one segment: `*` any run, `?` one character, everything else literal. */
function segmentRegex(segment: string): RegExp {
  const body = segment
    .split('')
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^$()|\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

/** Whether one directory entry matches one pattern segment (a wildcard never matches a leading dot). */
export function matchesSegment(segment: string, name: string): boolean {
  if (name.startsWith('.') && !segment.startsWith('.')) return false;
  return segmentRegex(segment).test(name);
}

/** The entries of `dir`, or none when it is missing or unreadable (a device not probed yet). */
function entriesOf(fs: GlobFs, dir: string): string[] {
  try {
    return fs.readdir(dir);
  } catch {
    return [];
  }
}

/**
 * The regular files `pattern` names, sorted. A path without wildcards gives itself when it is a
 * file. Throws only on a pattern {@link patternProblem} refuses.
 */
export function globFiles(pattern: string, fs: GlobFs = nodeGlobFs): string[] {
  const problem = patternProblem(pattern);
  if (problem !== undefined) throw new Error(`${pattern}: ${problem}`);
  const segments = pattern.split('/').filter((segment) => segment !== '');
  let candidates = ['/'];
  for (const segment of segments) {
    const next: string[] = [];
    for (const dir of candidates) {
      if (!hasWildcard(segment)) {
        const path = join(dir, segment);
        if (fs.exists(path)) next.push(path);
        continue;
      }
      for (const name of entriesOf(fs, dir).sort()) {
        if (matchesSegment(segment, name)) next.push(join(dir, name));
      }
    }
    candidates = next;
    if (candidates.length === 0) break;
  }
  return candidates.filter((path) => fs.isFile(path)).sort();
}

/** The one file a pattern names, or why there is not exactly one (the matches listed). */
export type UniqueMatch = { ok: true; path: string } | { ok: false; problem: string; matches: string[] };

/** How many matches a refusal lists before "and N more". */
const LISTED_MATCHES = 5;

/**
 * The only file `pattern` matches. None: "matches no file" (the device is absent, not probed
 * yet, or the pattern is wrong); several: "matches N files: a, b, …" so the person can write a
 * narrower pattern (the bus address, the channel).
 */
export function uniqueMatch(pattern: string, fs: GlobFs = nodeGlobFs): UniqueMatch {
  const matches = globFiles(pattern, fs);
  if (matches.length === 1) return { ok: true, path: matches[0]! };
  if (matches.length === 0) return { ok: false, problem: `${pattern} matches no file`, matches };
  const listed = matches.slice(0, LISTED_MATCHES).join(', ');
  const more = matches.length > LISTED_MATCHES ? ` and ${matches.length - LISTED_MATCHES} more` : '';
  return {
    ok: false,
    problem: `${pattern} matches ${matches.length} files, it must match one: ${listed}${more}`,
    matches,
  };
}
