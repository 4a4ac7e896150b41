import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pwmTree } from '../drivers/pwm-fixture.js';
import { startTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { reportFigures } from './support/figures.js';

/**
 * "PWM write failure": a hardware PWM heater (a zero-cross SSR on pwmchip0/pwm0)
 * whose duty_cycle stops taking writes mid-run (the fixture file replaced by a directory: every
 * write fails with EISDIR). The loop must report the failed write, and end safe: the stop
 * drives level 0, which disables the channel (enable 0) before it touches duty_cycle.
 */
describe('PWM write failure', () => {
  test('duty_cycle unwritable mid-run: the loop reports it, and the channel ends disabled', {
    timeout: 60_000,
  }, async (t) => {
    const { root, attr, channelDir } = pwmTree(t);
    mkdirSync(join(root, 'bus/w1/devices/28-0316a2795bff'), { recursive: true });
    const probe = join(root, 'bus/w1/devices/28-0316a2795bff/temperature');
    await import('node:fs').then((fs) => fs.writeFileSync(probe, '15000\n'));
    const text = `
version: 1
node: { id: kettle }
gpio: { sysfsRoot: ${JSON.stringify(root)} }
sensors:
  t: { kind: ds18b20, periodS: 10 }
actuators:
  ssr: { kind: pwm, periodMs: 2000 }
loops:
  kettle: { sensor: t, raise: ssr, mode: heat, setpoint: 20, limits: { min: 5, max: 90 }, controller: { type: pid, kp: 0.2, tiS: 600 } }
`;
    const node = await startTestNode(text, join(tempDir(t), 'state.db'));
    t.after(() => node.stop().catch(() => {}));
    // Given the heater regulating (5 °C below the setpoint: a PID output above 0): up to 60 s of
    // clock time, a second at a time, each followed by a file read that lets the cycle's real
    // sysfs I/O finish (see below), so a busy machine only makes it take longer.
    for (let s = 0; s < 60 && attr(0, 'enable') !== '1'; s++) {
      await node.clock.advance(1_000);
      await readFile(probe);
    }
    assert.equal(attr(0, 'enable'), '1', 'given: the SSR is driven');
    const dutyBefore = Number(attr(0, 'duty_cycle'));
    // When duty_cycle stops taking writes, and the error grows (the probe reads colder)
    rmSync(join(channelDir(0), 'duty_cycle'));
    mkdirSync(join(channelDir(0), 'duty_cycle'));
    await import('node:fs').then((fs) => fs.writeFileSync(probe, '5000\n'));
    const failedAtMs = node.clock.nowMs();
    const actuatorConfirmed = () =>
      node.daemon.statuses()[0]?.conditions.find((c) => c.type === 'ActuatorConfirmed');
    // Up to 60 s, a second at a time: after each, a file read goes through the same thread pool
    // as the driver's sysfs calls, so a cycle's real file I/O finishes before the clock moves
    // on (the manual clock only lets a few event-loop turns pass per timer).
    for (let s = 0; s < 60 && actuatorConfirmed()?.status !== 'False'; s++) {
      await node.clock.advance(1_000);
      await readFile(probe);
    }
    const confirmed = actuatorConfirmed();
    // Then the loop says its actuator is not confirmed
    assert.equal(confirmed?.status, 'False', JSON.stringify(confirmed));
    // And when it stops, the channel is disabled although duty_cycle still cannot be written
    const stopAtMs = node.clock.nowMs();
    await node.stop();
    assert.equal(readFileSync(join(channelDir(0), 'enable'), 'utf8').trim(), '0');
    reportFigures(t, {
      scenario: 'PWM write failure (duty_cycle unwritable)',
      notes: `duty before ${dutyBefore} ns; ActuatorConfirmed ${confirmed?.status} (${confirmed?.reason}: ${confirmed?.message ?? ''}) ${stopAtMs - failedAtMs} ms after the failure; enable 0 after stop`,
    });
  });
});
