/**
 * What every sensor driver promises the sampler (src/drivers/types.ts), as one suite each
 * driver runs on its fake device: a read is a finite number or an Error (never a string, never
 * `undefined`), what a read after `stop()` does is stated, and stopping twice is harmless.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { SensorDriver } from '../../../src/drivers/types.js';
import { stopReleasesTest } from './lifecycle.js';

/** One driver on its fake device, not started yet. */
export interface SensorHarness {
  driver: SensorDriver;
  /**
   * The device makes a good value available (a message, a w1_slave file, a window of
   * pulses…); called again, a different one where the device can. Returns the value `read()`
   * must then give, or `undefined` to check finiteness only.
   */
  provide(): number | undefined | Promise<number | undefined>;
  /** The device fails (gone, silent, unreadable): the next read must reject. */
  fail?(): void | Promise<void>;
  /** Whether what `start()` took is let go (subscription, pin export). */
  released(): boolean | Promise<boolean>;
}

/**
 * What `read()` does after `stop()`: `rejects` (the driver let go of its device),
 * `last-value` (a push driver keeps its last value until it is stale, and takes no new ones),
 * `reads` (a driver that holds nothing between reads goes on reading).
 */
export type ReadAfterStop = 'rejects' | 'last-value' | 'reads';

export interface SensorContractCase {
  name: string;
  readAfterStop: ReadAfterStop;
  /** Instead of a harness `fail`: why no device failure can show in a read (that test is skipped, saying so). */
  cannotFail?: string;
  /** A new driver on a new fake device; `t` is the test's context (temp dirs are removed after it). */
  make(t: TestContext): SensorHarness | Promise<SensorHarness>;
}

async function started(c: SensorContractCase, t: TestContext): Promise<SensorHarness> {
  const harness = await c.make(t);
  await harness.driver.start?.();
  return harness;
}

/** Reads and checks the contract's core: a finite number, or a rejection with an Error. */
async function readOutcome(driver: SensorDriver): Promise<{ value: number } | { error: Error }> {
  try {
    const value = await driver.read();
    assert.equal(typeof value, 'number', `read() resolved ${typeof value}`);
    return { value };
  } catch (error) {
    assert.ok(error instanceof Error, `read() rejected with ${typeof error}, not an Error`);
    assert.notEqual(error.message, '', 'the error says why');
    return { error };
  }
}

/** Registers the contract suite for one driver. */
export function sensorContract(c: SensorContractCase): void {
  describe(`sensor contract: ${c.name}`, () => {
    test('given a good value at the device, read returns it as a finite number', async (t) => {
      const { driver, provide } = await started(c, t);
      const expected = await provide();
      const outcome = await readOutcome(driver);
      assert.ok('value' in outcome, `read failed: ${'error' in outcome ? outcome.error.message : ''}`);
      assert.ok(Number.isFinite(outcome.value), `${outcome.value} is not finite`);
      if (expected !== undefined) assert.equal(outcome.value, expected);
    });

    test('given a failing device, read rejects with an Error that says why', {
      skip: c.cannotFail,
    }, async (t) => {
      const { driver, provide, fail } = await started(c, t);
      assert.ok(fail, 'a harness gives fail() or cannotFail');
      await provide();
      await fail();
      const outcome = await readOutcome(driver);
      assert.ok('error' in outcome, `read resolved ${'value' in outcome ? outcome.value : ''}`);
    });

    test(`read after stop: ${c.readAfterStop}`, async (t) => {
      const { driver, provide } = await started(c, t);
      await provide();
      const beforeStop = await driver.read();
      await driver.stop?.();
      await provide(); // the device goes on (a new message, a new temperature, pulses)
      const outcome = await readOutcome(driver);
      if (c.readAfterStop === 'rejects') {
        assert.ok('error' in outcome, 'read after stop must reject');
        return;
      }
      assert.ok(
        'value' in outcome,
        `read after stop failed: ${'error' in outcome ? outcome.error.message : ''}`,
      );
      assert.ok(Number.isFinite(outcome.value));
      if (c.readAfterStop === 'last-value')
        assert.equal(outcome.value, beforeStop, 'the value from before stop');
    });

    stopReleasesTest((t) => started(c, t));
  });
}
