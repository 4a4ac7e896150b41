import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';

describe('Sampler.latestForLoop: the reading a loop judges carries the failure of the reads after it', () => {
  test('given a good reading then failing reads, latestForLoop carries the error until a read succeeds', async () => {
    const clock = new ManualClock();
    const outcomes: Array<number | Error> = [20, new Error('CRC mismatch'), 22];
    const sampler = new Sampler({
      clock,
      logger: pino({ level: 'silent' }),
      sensors: [
        {
          driver: {
            id: 't1',
            simulated: true,
            read: async () => {
              const next = outcomes.shift() ?? 22;
              if (next instanceof Error) throw next;
              return next;
            },
          },
          periodMs: 1_000,
        },
      ],
    });
    // Each row: clock time → what a loop sees.
    const table: Array<[atMs: number, seen: object]> = [
      [0, { value: 20, atMs: 0 }],
      [1_000, { value: 20, atMs: 0, lastError: 'CRC mismatch' }],
      [2_000, { value: 22, atMs: 2_000 }],
    ];
    sampler.start();
    for (const [atMs, seen] of table) {
      await clock.advance(atMs - clock.nowMs());
      assert.deepEqual(sampler.latestForLoop('t1'), seen, `t=${atMs}`);
    }
    await sampler.stop();
  });

  test('given no reading ever, latestForLoop is undefined (the loop says Missing)', () => {
    const sampler = new Sampler({ clock: new ManualClock(), logger: pino({ level: 'silent' }), sensors: [] });
    assert.equal(sampler.latestForLoop('none'), undefined);
  });
});
