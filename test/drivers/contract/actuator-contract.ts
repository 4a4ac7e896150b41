/**
 * What every actuator driver promises the daemon (src/drivers/types.ts), as one suite each
 * driver runs on its fake device: levels it refuses, what `observe()` reports, absolute and
 * repeatable commands, and a lifecycle where `stop()` lets go and later writes fail.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { ActuatorDriver } from '../../../src/drivers/types.js';
import { stopReleasesTest } from './lifecycle.js';

/** One driver on its fake device, not started yet. */
export interface ActuatorHarness {
  driver: ActuatorDriver;
  /**
   * The device reports `level` as its actual state, as real hardware would after obeying a
   * command (MQTT: the state topic echoes it). Nothing to do where `observe()` reads the device
   * itself (a GPIO pin, a simulated plant input).
   */
  confirm(level: number): void | Promise<void>;
  /** Every physical command sent so far (pin writes, command-topic publishes, plant input writes). */
  commands(): unknown[];
  /** Whether what `start()` took is let go (no subscription left, pin handle dropped…). */
  released(): boolean | Promise<boolean>;
}

export interface ActuatorContractCase {
  /** The suite's title: the driver and its fake device. */
  name: string;
  kind: 'relay' | 'continuous';
  /** A new driver on a new fake device; `t` is the test's context (temp dirs are removed after it). */
  make(t: TestContext): ActuatorHarness | Promise<ActuatorHarness>;
}

/** A level neither kind takes, and one only a continuous actuator takes. */
const OUT_OF_RANGE = [-0.1, 1.5, Number.NaN];
const HALF = 0.5;

async function started(c: ActuatorContractCase, t: TestContext): Promise<ActuatorHarness> {
  const harness = await c.make(t);
  await harness.driver.start?.();
  return harness;
}

/** Registers the contract suite for one driver. */
export function actuatorContract(c: ActuatorContractCase): void {
  describe(`actuator contract: ${c.name}`, () => {
    test(`declares kind ${c.kind}`, async (t) => {
      const { driver } = await started(c, t);
      assert.equal(driver.kind, c.kind);
    });

    if (c.kind === 'relay') {
      test('a relay refuses 0.5: write rejects with a RangeError and nothing is sent', async (t) => {
        const { driver, commands } = await started(c, t);
        await assert.rejects(driver.write(HALF), RangeError);
        assert.deepEqual(commands(), []);
      });
    } else {
      test('a continuous actuator accepts 0.5, and observe reports it once confirmed', async (t) => {
        const { driver, commands, confirm } = await started(c, t);
        await driver.write(HALF);
        assert.equal(commands().length, 1);
        await confirm(HALF);
        assert.equal(await driver.observe(), HALF);
      });
    }

    test('levels outside 0..1 (and NaN) are refused with a RangeError, nothing sent', async (t) => {
      const { driver, commands } = await started(c, t);
      for (const level of OUT_OF_RANGE)
        await assert.rejects(driver.write(level), RangeError, `level ${level}`);
      assert.deepEqual(commands(), []);
    });

    test('observe reports a confirmed write: 1, then 0', async (t) => {
      const { driver, confirm } = await started(c, t);
      for (const level of [1, 0]) {
        await driver.write(level);
        await confirm(level);
        assert.equal(await driver.observe(), level, `after write(${level})`);
      }
    });

    test('writes are absolute: the same level twice sends the same command again (never a toggle)', async (t) => {
      const { driver, commands, confirm } = await started(c, t);
      await driver.write(1);
      const once = commands();
      await driver.write(1);
      const twice = commands();
      assert.equal(once.length, 1, 'one command for one write');
      assert.ok(twice.length <= 2, `at most one more command, got ${twice.length}`);
      for (const command of twice) assert.deepEqual(command, once[0], 'every command the same');
      await confirm(1);
      assert.equal(await driver.observe(), 1);
    });

    test('write after stop fails, and sends nothing', async (t) => {
      const { driver, commands } = await started(c, t);
      await driver.write(0);
      const before = commands().length;
      await driver.stop?.();
      await assert.rejects(driver.write(0), Error);
      await assert.rejects(driver.write(1), Error);
      assert.equal(commands().length, before);
    });

    stopReleasesTest((t) => started(c, t));
  });
}
