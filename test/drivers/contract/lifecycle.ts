/** The lifecycle items every driver contract shares. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';

/** A started driver and how to tell that it let go of what it took. */
export interface Releasing {
  driver: { stop?(): Promise<void> };
  released(): boolean | Promise<boolean>;
}

/** Registers: `stop()` releases what `start()` took, and a second `stop()` is harmless. */
export function stopReleasesTest(started: (t: TestContext) => Promise<Releasing>): void {
  test('stop releases what start took, and stopping twice is harmless', async (t) => {
    const harness = await started(t);
    await harness.driver.stop?.();
    assert.ok(await harness.released(), 'released after stop');
    await harness.driver.stop?.();
    assert.ok(await harness.released(), 'still released after a second stop');
  });
}
