/**
 * The autotune section of the control benchmark alone:
 * `node --import tsx test/bench/autotune.ts [--out DIR] [--json]`. Prints the report (or the
 * rows and targets as JSON), writes the step-response SVGs and summary.json into DIR
 * (default bench-results/control). Not a test: always exits 0 unless it crashes.
 */
import { DEFAULT_OUT_DIR, runAutotuneBench } from './control/autotune.js';

const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const outDir = outIndex >= 0 && args[outIndex + 1] !== undefined ? args[outIndex + 1]! : DEFAULT_OUT_DIR;
const bench = runAutotuneBench({ outDir });
if (args.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ rows: bench.rows, targets: bench.targets }, null, 2)}\n`);
} else {
  process.stdout.write(`${bench.text}\n`);
}
