/** The terminal Ask on streams standing in for a terminal, and askUntil's retry rule. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { askUntil, MAX_ATTEMPTS, NoAnswer, terminalAsk } from '../../src/init/prompt.js';
import { scripted } from './helpers.js';

describe('terminalAsk', () => {
  test('writes the question, resolves to the line typed', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk) => {
      shown += String(chunk);
    });
    const { ask, close } = terminalAsk(input, output);
    const answer = ask('Setpoint, °C [20]: ');
    input.write('21.5\n');
    assert.equal(await answer, '21.5');
    assert.match(shown, /Setpoint, °C \[20\]: /);
    close();
  });

  test('input ending (Ctrl-D) while asking: NoAnswer, and so for any later question', async () => {
    const input = new PassThrough();
    const { ask, close } = terminalAsk(input, new PassThrough());
    const pending = ask('Relay pin: ');
    input.end();
    await assert.rejects(pending, NoAnswer);
    await assert.rejects(ask('again: '), NoAnswer);
    close();
  });
});

describe('askUntil', () => {
  const wholeNumber = (answer: string) =>
    /^\d+$/.test(answer) ? { value: Number(answer) } : { error: `"${answer}" is not a whole number` };

  test('the fallback in brackets, taken on an empty answer', async () => {
    const ask = scripted(['']);
    assert.equal(await askUntil(ask, () => {}, 'Pin', '17', wholeNumber), 17);
    assert.deepEqual(ask.questions, ['Pin [17]: ']);
  });

  test(`a refused answer is written with its reason and asked again, ${MAX_ATTEMPTS} times at most`, async () => {
    const lines: string[] = [];
    const ask = scripted(['a', '', 'c', '4']);
    await assert.rejects(
      askUntil(ask, (l) => lines.push(l), 'Pin', undefined, wholeNumber),
      /"c" is not/,
    );
    assert.deepEqual(lines, [
      '  "a" is not a whole number',
      '  an answer is needed',
      '  "c" is not a whole number',
    ]);
    assert.equal(ask.questions.length, MAX_ATTEMPTS);
  });
});
