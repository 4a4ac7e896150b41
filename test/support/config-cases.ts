/**
 * Table-driven config refusals: one test per case, as the config test files declare them. Apart
 * from support/config.ts so that benches loading the config builders do not load node:test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configErrors } from './config.js';

/** A config the loader must refuse: what it breaks, its text, error lines expected among the loader's. */
export type ConfigErrorCase = [what: string, text: string, expected: string[]];

/**
 * One test per case, titled `title(what, expected)` (default `what`): the loader refuses the
 * text, and every expected line is among its errors.
 */
export function testConfigErrorCases(
  cases: ConfigErrorCase[],
  title: (what: string, expected: string[]) => string = (what) => what,
): void {
  for (const [what, text, expected] of cases) {
    test(title(what, expected), () => {
      const found = configErrors(text);
      for (const line of expected)
        assert.ok(found.includes(line), `expected "${line}" among:\n${found.join('\n')}`);
    });
  }
}
