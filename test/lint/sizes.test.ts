/** The size limits `npm run lint` holds (test/lint/sizes.ts), as a specification. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { breaches, MAX_FILE_LINES, MAX_FUNCTION_LINES, oversizesOf } from './sizes.js';

const lines = (n: number, text = '  x += 1;') => Array.from({ length: n }, () => text).join('\n');

describe('oversizesOf', () => {
  // Given a file's text, then what is over a limit:
  const cases: [string, string, string[]][] = [
    ['a short function', `function short() {\n${lines(10)}\n}\n`, []],
    ['a function of exactly 60 lines', `function sixty() {\n${lines(MAX_FUNCTION_LINES - 2)}\n}\n`, []],
    [
      'a function of 61 lines',
      `function long() {\n${lines(MAX_FUNCTION_LINES - 1)}\n}\n`,
      ['function long 61'],
    ],
    ['a method', `class Heater {\n  run() {\n${lines(70)}\n  }\n}\n`, ['function Heater.run 72']],
    ['an arrow in a const', `const step = () => {\n${lines(70)}\n};\n`, ['function step 72']],
    ['a file of 401 lines', `${lines(MAX_FILE_LINES + 1, 'let a = 1;')}\n`, ['file 401']],
    ['a file of 400 lines', `${lines(MAX_FILE_LINES, 'let a = 1;')}\n`, []],
  ];
  for (const [what, text, expected] of cases) {
    test(`${what}: ${expected.join(', ') || 'nothing'}`, () => {
      assert.deepEqual(
        oversizesOf('x.ts', text).map((o) => `${o.what} ${o.lines}`),
        expected,
      );
    });
  }
});

describe('breaches', () => {
  const found = [{ what: 'function main', path: 'src/cli.ts', lines: 141 }];
  test('a listed function not grown: no breach', () => {
    assert.deepEqual(breaches(found, [{ ...found[0]!, why: 'to split' }]), []);
  });
  test('a listed function grown: a breach naming both sizes and why it waits', () => {
    assert.deepEqual(breaches(found, [{ ...found[0]!, lines: 140, why: 'to split' }]), [
      'src/cli.ts: function main grew to 141 lines (allowed 140 while it waits: to split)',
    ]);
  });
  test('an unlisted one: a breach saying to reshape it', () => {
    assert.deepEqual(breaches(found, []), ['src/cli.ts: function main is 141 lines (limit 60): reshape it']);
  });
});
