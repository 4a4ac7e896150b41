/**
 * Prints the test files `npm test` hands to `node --test`, relative to the repository: each file
 * that runs in a process of its own, and test/bundle.test.ts, which runs the rest in one
 * (test/support/bundle.ts says which is which).
 */
import { join, relative } from 'node:path';
import { separateTestFiles, TEST_ROOT } from './bundle.js';

const REPO = join(TEST_ROOT, '..');
process.stdout.write(
  `${separateTestFiles()
    .map((file) => relative(REPO, file))
    .join('\n')}\n`,
);
