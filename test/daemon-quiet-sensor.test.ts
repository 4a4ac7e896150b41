/**
 * The quiet-sensor case end to end, on the real path (mqtt sensor driver with its
 * liveness block, sampler, loop runner, reconcile) in a Daemon on a ManualClock: the demo's
 * fermenter read through a Zigbee probe that reports only on a 0.5 °C change or about hourly,
 * for 24 simulated hours (test/support/quiet-fermenter.ts plays the probe and Zigbee2MQTT).
 *
 * - With liveness the loop never goes safe while the device is alive; without it (staleAfterS
 *   at its default, 180 s) the same day flaps.
 * - Zigbee2MQTT saying offline sends the loop safe in the cycle the message arrives.
 * - A probe that dies without a word (availability still online) is trusted up to maxQuietS
 *   (default 90 min) after its last report, not a cycle longer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HOUR_MS, MAX_QUIET_MS, ONE_CYCLE_MS, QuietFermenter, quietDay } from './support/quiet-fermenter.js';

const QUIET_MESSAGE = /^quiet: unchanged for \d+ min, device seen \d+ s ago \(limit 90 min\)$/;

/** A fermenter with liveness, regulating for `hours` first. */
async function regulatingFermenter(hours: number, setpointC?: number): Promise<QuietFermenter> {
  const fermenter = new QuietFermenter(true, setpointC === undefined ? {} : { setpointC });
  await fermenter.start();
  await fermenter.runFor(hours * HOUR_MS);
  assert.ok(
    fermenter.cycles.every((c) => !c.safe),
    'regulating all along before the fault',
  );
  return fermenter;
}

describe('daemon: a quiet Zigbee probe on the demo fermenter, 24 simulated hours', () => {
  test('with liveness: no cycle in the safe state and no SensorHealthy flap while the device is alive; without it the same day flaps', async (t) => {
    const fermenter = new QuietFermenter(true);
    await fermenter.start();
    const fromMs = fermenter.nowMs();
    await fermenter.runFor(24 * HOUR_MS);
    await fermenter.stop();
    const after = fermenter.counts(fromMs);
    const before = await quietDay(false);
    t.diagnostic(`before (staleAfterS 180 s): ${JSON.stringify(before)}`);
    t.diagnostic(`after (liveness): ${JSON.stringify(after)}`);

    assert.ok(after.cycles >= (24 * HOUR_MS) / ONE_CYCLE_MS, `${after.cycles} cycles`);
    assert.equal(after.safeCycles, 0);
    assert.equal(after.healthyFlaps, 0);
    // The probe was quiet for most of the day, and the status said so.
    assert.ok(after.reports < 60, `${after.reports} reports in 24 h`);
    const quiet = fermenter.cycles.filter((c) => c.healthyReason === 'Quiet');
    assert.ok(quiet.length > after.cycles / 2, `${quiet.length} quiet cycles`);
    for (const cycle of quiet) assert.match(cycle.healthyMessage, QUIET_MESSAGE);
    assert.ok(
      fermenter.cycles.some((c) => /^quiet: unchanged for 4\d min/.test(c.healthyMessage)),
      'quiet for over 40 min between reports, still in force',
    );
    // Before: the same probe and plant go stale between reports and cycle the loop.
    assert.ok(before.healthyFlaps >= 10, `${before.healthyFlaps} flaps without liveness`);
    assert.ok(before.safeCycles > after.cycles / 10, `${before.safeCycles} safe cycles without liveness`);
  });

  for (const { running, setpointC } of [
    { running: 'chamber_cooler', setpointC: 18 },
    { running: 'chamber_heater', setpointC: 24 },
  ] as const) {
    test(`given ${running} on (setpoint ${setpointC} °C), when Zigbee2MQTT says offline, then every actuator is safe in the cycle the message arrives`, async () => {
      const fermenter = await regulatingFermenter(2, setpointC);
      const on = () => fermenter.cycles.at(-1)?.wanted[running] === 1;
      for (let i = 0; i < 360 && !on(); i++) await fermenter.runFor(10_000);
      assert.ok(on(), `${running} ran within an hour`);
      const offlineAtMs = fermenter.nowMs();
      const cyclesBefore = fermenter.cycles.length;
      await fermenter.goOffline();
      await fermenter.runFor(HOUR_MS);
      await fermenter.stop();

      const first = fermenter.cycles[cyclesBefore];
      assert.ok(first, 'a cycle after the message');
      assert.ok(first.atMs - offlineAtMs <= ONE_CYCLE_MS, `${first.atMs - offlineAtMs} ms after`);
      assert.equal(first.atMs, offlineAtMs, 'the message itself triggered the cycle');
      assert.equal(first.safe, true);
      assert.equal(first.faultReason, 'SensorOffline');
      assert.equal(first.healthyReason, 'Offline');
      assert.equal(
        first.healthyMessage,
        'device offline for 0 s (availability zigbee2mqtt/fermenter_probe/availability, field last_seen)',
      );
      assert.deepEqual(first.wanted, { chamber_heater: 0, chamber_cooler: 0 });
      const later = fermenter.cycles.slice(cyclesBefore);
      assert.ok(
        later.every((c) => c.safe && c.healthyReason === 'Offline'),
        'safe while offline',
      );
    });
  }

  test('given the probe dies without a word (availability still online), then the loop is safe at maxQuietS after its last report: not before, within one cycle after', async (t) => {
    const fermenter = await regulatingFermenter(6);
    fermenter.goSilent();
    const lastReportAtMs = fermenter.lastReport!.atMs;
    const boundMs = lastReportAtMs + MAX_QUIET_MS;
    await fermenter.runFor(boundMs + 2 * ONE_CYCLE_MS - fermenter.nowMs());
    await fermenter.stop();

    const since = fermenter.cycles.filter((c) => c.atMs > lastReportAtMs);
    const firstSafe = since.findIndex((c) => c.safe);
    assert.ok(firstSafe > 0, 'safe at last, after regulating cycles');
    const lastTrusted = since[firstSafe - 1]!;
    const safe = since[firstSafe]!;
    assert.ok(lastTrusted.atMs <= boundMs, 'not before maxQuietS');
    assert.ok(boundMs - lastTrusted.atMs <= ONE_CYCLE_MS, 'a cycle shortly before the bound still regulated');
    assert.equal(lastTrusted.healthyReason, 'Quiet');
    assert.match(lastTrusted.healthyMessage, /^quiet: unchanged for (89|90) min/);
    t.diagnostic(
      `last trusted cycle ${lastTrusted.atMs - boundMs} ms, first safe ${safe.atMs - boundMs} ms from the bound`,
    );
    assert.ok(safe.atMs > boundMs, `${safe.atMs - boundMs} ms after the bound`);
    assert.ok(safe.atMs - boundMs <= ONE_CYCLE_MS, `within one cycle: ${safe.atMs - boundMs} ms`);
    assert.equal(safe.faultReason, 'SensorStale');
    assert.equal(
      safe.healthyMessage,
      'quiet for 90 min though the device is alive (limit 90 min): no new value',
    );
    assert.deepEqual(safe.wanted, { chamber_heater: 0, chamber_cooler: 0 });
    assert.ok(
      since.slice(firstSafe).every((c) => c.safe),
      'stays safe',
    );
  });
});
