import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';

/** `count` sensors read every `periodMs`; returns the sampler and each sensor's read times. */
function sampled(count: number, periodMs: number, clock: ManualClock) {
  const readsAtMs = Array.from({ length: count }, () => [] as number[]);
  const sampler = new Sampler({
    clock,
    logger: pino({ level: 'silent' }),
    sensors: readsAtMs.map((reads, index) => ({
      driver: {
        id: `s${index}`,
        simulated: true,
        read: async () => {
          reads.push(clock.nowMs());
          return 20;
        },
      },
      periodMs,
    })),
  });
  return { sampler, readsAtMs };
}

/** Runs `count` sensors read every `periodMs` for `durationMs` from 0, 100 ms at a time; each sensor's read times. */
async function readTimesOver(count: number, periodMs: number, durationMs: number): Promise<number[][]> {
  const clock = new ManualClock(0);
  const { sampler, readsAtMs } = sampled(count, periodMs, clock);
  sampler.start();
  for (let t = 0; t < durationMs; t += 100) await clock.advance(100);
  await sampler.stop();
  return readsAtMs;
}

describe('Sampler: many sensors are spread over their period (no burst every period)', () => {
  test('given 20 sensors read every 10 s, their second reads fall 0.5 s apart, and each keeps its 10 s period', async () => {
    const readsAtMs = await readTimesOver(20, 10_000, 25_000);
    const secondReads = readsAtMs.map((reads) => reads[1]);
    assert.deepEqual(
      secondReads,
      Array.from({ length: 20 }, (_, i) => ((i + 1) * 10_000) / 20),
      'the first period of sensor i is (i + 1)/20 of a period',
    );
    for (const reads of readsAtMs) {
      assert.equal(reads[0], 0, 'every sensor is read at start');
      assert.equal(reads[2]! - reads[1]!, 10_000, 'then every period');
    }
  });

  test('given a few sensors (16 or fewer), they keep one phase (read together)', async () => {
    const readsAtMs = await readTimesOver(3, 10_000, 10_000);
    assert.deepEqual(
      readsAtMs.map((reads) => reads[1]),
      [10_000, 10_000, 10_000],
    );
  });
});
