import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { localTimeText, planSchedules } from '../../src/config/plan-schedule.js';
import { minimalSimConfig, minimalSimConfigText, validConfig } from '../support/config.js';

// Monday 2026-03-02 05:00 UTC = 06:00 in Berlin (UTC+1).
const NOW = Date.UTC(2026, 2, 2, 5, 0);

const berlin = (loopExtra: string) =>
  validConfig(
    minimalSimConfigText({ loopExtra }).replace(
      'node: { id: pi }',
      'node: { id: pi, timeZone: Europe/Berlin }',
    ),
  );

describe('homeostat plan: schedules', () => {
  test('local time text in the zone', () => {
    assert.equal(localTimeText(NOW, 'Europe/Berlin'), 'Mon 2026-03-02 06:00');
    assert.equal(localTimeText(NOW, 'America/New_York'), 'Mon 2026-03-02 00:00');
  });

  test('given a weekly schedule, then the setpoint now, its source and the next changes in local time', () => {
    const config = berlin(`    presets: { comfort: { setpoint: 21.5 } }
    schedule:
      weekly:
        - { days: [mon, tue, wed, thu, fri, sat, sun], at: "06:30", preset: comfort }
        - { days: [mon, tue, wed, thu, fri, sat, sun], at: "22:00", setpoint: 18 }`);
    // nodeTimeZone reads node.timeZone off the resolved config: given here as resolve.ts would.
    const withZone = { ...config, node: { ...config.node, timeZone: 'Europe/Berlin' } };
    const lines = planSchedules(withZone, [], NOW);
    assert.deepEqual(lines, [
      'schedule room: 18 °C heat now, from schedule (Europe/Berlin)',
      '  next Mon 2026-03-02 06:30 → 21.5 °C (schedule)',
      '  next Mon 2026-03-02 22:00 → 18 °C (schedule)',
      '  next Tue 2026-03-03 06:30 → 21.5 °C (schedule)',
    ]);
  });

  test('given a stored running profile, then its step and the next step', () => {
    const config = minimalSimConfig({
      loopExtra: `    profiles:
      ale: { steps: [{ holdS: 3600, setpoint: 18 }, { holdS: 3600, setpoint: 12 }] }`,
    });
    const withZone = { ...config, node: { ...config.node, timeZone: 'UTC' } };
    const row = {
      loop: 'room',
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'ale', startedAtMs: NOW - 600_000, pausedTotalMs: 0 },
    };
    assert.deepEqual(planSchedules(withZone, [row], NOW), [
      'schedule room: 18 °C heat now, from profile, profile ale running, step 1/2 (UTC)',
      '  next Mon 2026-03-02 05:50 → 12 °C (profile)',
    ]);
  });

  test('a ramp step is printed as a ramp to its setpoint', () => {
    const config = minimalSimConfig({
      loopExtra: `    profiles:
      ale: { steps: [{ holdS: 3600, setpoint: 18 }, { rampS: 3600, to: 21 }, { holdS: 3600, setpoint: 21 }] }`,
    });
    const withZone = { ...config, node: { ...config.node, timeZone: 'UTC' } };
    const row = {
      loop: 'room',
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'ale', startedAtMs: NOW - 600_000, pausedTotalMs: 0 },
    };
    assert.deepEqual(planSchedules(withZone, [row], NOW).slice(1), [
      '  next Mon 2026-03-02 05:50 → ramp to 21 °C (profile)',
      '  next Mon 2026-03-02 06:50 → 21 °C (profile)',
    ]);
  });

  test('a loop without presets, schedule or profiles prints nothing', () => {
    assert.deepEqual(planSchedules(minimalSimConfig(), [], NOW), []);
  });
});
