/**
 * `npm run test:faults`: runs every fault scenario (test/faults/*.fault.ts) with node:test, one
 * file at a time (they start daemons, brokers and floods: running them side by side would
 * measure each other), then prints one summary table of their figures.
 *
 *   npm run test:faults                 every scenario
 *   npm run test:faults -- kill input   only files whose name contains "kill" or "input"
 *
 * The files are named *.fault.ts so that `npm test` (every *.test.ts) leaves them out.
 * Exit code: node --test's.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '../support/tmp.js';
import { FIGURES_FILE_ENV, type Figures, summaryTable } from './support/figures.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith('.fault.ts'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort()
  .map((name) => join('test', 'faults', name));
if (files.length === 0) {
  console.error(`no fault scenario matches ${filters.join(', ')}`);
  process.exit(1);
}

const { dir, remove: removeDir } = makeTempDir('homeostat-faults-');
const figuresFile = join(dir, 'figures.jsonl');
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files],
  {
    cwd: root,
    stdio: ['inherit', 'pipe', 'inherit'],
    env: { ...process.env, [FIGURES_FILE_ENV]: figuresFile },
  },
);
// Passed through as it comes; its tail is kept for the counts repeated after the table.
let tail = '';
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});
const code: number = await new Promise((resolve) =>
  child.on('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);

let figures: Figures[] = [];
try {
  figures = readFileSync(figuresFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Figures);
} catch {
  // No scenario got as far as its figures.
}
removeDir();
console.log('\n== fault-injection figures (npm run test:faults)\n');
console.log(figures.length > 0 ? summaryTable(figures) : '(no figures recorded)');
// The runner's counts again, last, in the plain form CI reads ("N passed, N failed").
const count = (label: string) => Number(new RegExp(`ℹ ${label} (\\d+)`).exec(tail)?.[1] ?? 0);
console.log(`\nfaults: ${count('pass')} passed, ${count('fail')} failed`);
process.exitCode = code;
