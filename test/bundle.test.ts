/**
 * The leak-free test files of the folders in test/support/bundle.ts, run in this one
 * process instead of one process each: starting Node and tsx again for each cost more than
 * running most of them (about 1 s per file). The same tests, the same counts, failures reported
 * at their own file and line. `npm test` runs every other file in a process of its own
 * (test/support/test-files.ts lists them); test/lint/bundle.test.ts checks that the two
 * lists split the test files between them and that the leak rules find what they are for.
 */
import { pathToFileURL } from 'node:url';
import { bundledTestFiles } from './support/bundle.js';

// One after the other: each file's tests are registered as it loads, and run in that order.
for (const file of bundledTestFiles()) await import(pathToFileURL(file).href);
