/**
 * The test files of the folders in test/support/pure-bundle.ts, run in this one process
 * instead of one process each: they are pure or use only their own temporary files, fixture
 * trees and brokers, and starting Node and tsx again for each cost more than running most of
 * them (about 1 s per file; these 130-odd files take 86 s apart, 30 s here: the same tests,
 * the same counts, failures reported at their own file and line). `npm test` leaves these
 * folders out of its own list; test/lint/pure-bundle.test.ts checks that the two agree and
 * that no bundled file has what would leak into the others.
 */
import { pathToFileURL } from 'node:url';
import { bundledTestFiles } from './support/pure-bundle.js';

// One after the other: each file's tests are registered as it loads, and run in that order.
for (const file of bundledTestFiles()) await import(pathToFileURL(file).href);
