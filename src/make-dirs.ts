import fs from 'node:fs';
import path from 'node:path';

/**
 * `mkdir -p` that cannot spin. Node 20's recursive mkdir loops for ever when a parent exists but
 * refuses children with ENOENT (procfs, sysfs): `homeostat run --db /proc/x/homeostat.db` hung
 * at start without a line of output. Each missing directory is made in turn, with `mode` (less
 * the umask); the first error is thrown as it is. Returns the topmost directory it created (as
 * the recursive mkdir does), or undefined when `dir` existed.
 */
export function makeDirs(dir: string, mode: number): string | undefined {
  const missing: string[] = [];
  let current = path.resolve(dir);
  while (!fs.existsSync(current)) {
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const made of missing) fs.mkdirSync(made, { mode });
  return missing[0];
}
