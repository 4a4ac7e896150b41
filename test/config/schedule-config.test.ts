import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeTimeZone, splitPath, systemTimeZone } from '../../src/config/schema/schedule.js';
import { configErrors, minimalSimConfigText, validConfig } from '../support/config.js';

/** The minimal loop `room` (heater only, limits 5..30) with `loopExtra` inside it. */
const withLoop = (loopExtra: string, extra = '') => minimalSimConfigText({ loopExtra, extra });

describe('config: presets, schedule, profiles (loops.<id>)', () => {
  test('given presets, a weekly schedule and a profile within limits, then the file is valid and keeps them', () => {
    const config = validConfig(
      withLoop(`    presets:
      eco: { setpoint: 17 }
      away: { setpoint: 12, mode: off }
    schedule:
      manualHoldS: 7200
      weekly:
        - { days: [mon, tue], at: "06:30", preset: eco }
        - { days: [sat], at: "08:00", setpoint: 21 }
    profiles:
      ale:
        steps:
          - { holdS: 3600, setpoint: 18 }
          - { rampS: 7200, to: 21 }`),
    );
    const room = config.loops.room!;
    assert.deepEqual(room.presets?.away, { setpoint: 12, mode: 'off' });
    assert.equal(room.schedule?.weekly?.length, 2);
    assert.equal(room.schedule?.manualHoldS, 7200);
    assert.deepEqual(room.profiles?.ale?.steps[1], { rampS: 7200, to: 21 });
  });

  test('a loop without any of them parses as before: no presets, schedule or profiles keys', () => {
    const room = validConfig(withLoop('')).loops.room!;
    assert.equal('presets' in room, false);
    assert.equal('schedule' in room, false);
    assert.equal('profiles' in room, false);
  });

  // Each mistake is refused with its path, the message the core or the limits check gives.
  const refused: { name: string; loopExtra: string; expect: RegExp }[] = [
    {
      name: 'a preset named None (Home Assistant: no preset)',
      loopExtra: '    presets: { None: { setpoint: 17 } }',
      expect: /^loops\.room\.presets: preset name "None" is reserved \(it means no preset\); choose another/m,
    },
    {
      name: 'a profile name longer than 64 characters',
      loopExtra: `    profiles:\n      ${'a'.repeat(65)}: { steps: [{ holdS: 60, setpoint: 18 }] }`,
      expect: /^loops\.room\.profiles: profile name "a{65}" is longer than 64 characters/m,
    },
    {
      name: 'a manualHoldS of 1e13 s',
      loopExtra: `    schedule:\n      manualHoldS: 10000000000000`,
      expect:
        /^loops\.room\.schedule\.manualHoldS: 10000000000000 s is longer than 315360000 s \(10 years\)/m,
    },
    {
      name: 'a profile hold of 1e13 s',
      loopExtra: `    profiles:\n      ale: { steps: [{ holdS: 10000000000000, setpoint: 18 }] }`,
      expect: /^loops\.room\.profiles\.ale\.steps\[0\]\.holdS: 10000000000000 s is longer than/m,
    },
    {
      name: 'an unknown preset in the schedule',
      loopExtra: `    presets: { eco: { setpoint: 17 } }
    schedule:
      weekly: [{ days: [mon], at: "06:30", preset: ecco }]`,
      expect: /^loops\.room\.schedule\.weekly\[0\]\.preset: unknown preset "ecco" \(known: eco\)/m,
    },
    {
      name: 'a preset setpoint outside limits',
      loopExtra: '    presets: { hot: { setpoint: 35 } }',
      expect: /^loops\.room\.presets\.hot\.setpoint: 35 is outside limits 5\.\.30/m,
    },
    {
      name: 'a profile step outside limits',
      loopExtra: `    profiles:
      crash: { steps: [{ holdS: 60, setpoint: 18 }, { rampS: 60, to: 2 }] }`,
      expect: /^loops\.room\.profiles\.crash\.steps\[1\]\.to: 2 is outside limits 5\.\.30/m,
    },
    {
      name: 'a schedule setpoint outside limits',
      loopExtra: `    schedule:
      weekly: [{ days: [sun], at: "22:00", setpoint: 40 }]`,
      expect: /^loops\.room\.schedule\.weekly\[0\]\.setpoint: 40 is outside limits 5\.\.30/m,
    },
    {
      name: 'a preset mode the loop cannot do (heater only: no cool)',
      loopExtra: '    presets: { chill: { setpoint: 10, mode: cool } }',
      expect:
        /^loops\.room\.presets\.chill\.mode: mode "cool" is not allowed for this loop \(allowed: off, heat\)/m,
    },
    {
      name: 'a time that is not HH:MM',
      loopExtra: `    schedule:
      weekly: [{ days: [mon], at: "25:00", setpoint: 20 }]`,
      expect: /^loops\.room\.schedule\.weekly\[0\]\.at: "25:00" is not a time HH:MM/m,
    },
    {
      name: 'a ramp first',
      loopExtra: `    profiles:
      bad: { steps: [{ rampS: 60, to: 20 }] }`,
      expect: /^loops\.room\.profiles\.bad\.steps\[0\]: a ramp needs a step before it/m,
    },
  ];
  for (const { name, loopExtra, expect } of refused) {
    test(`refuses ${name}, with the path`, () => {
      const errors = configErrors(withLoop(loopExtra)).join('\n');
      assert.match(errors, expect);
    });
  }

  test('node.timeZone: an IANA name is kept; a bad one is refused with its path', () => {
    const text = withLoop('').replace('node: { id: pi }', 'node: { id: pi, timeZone: Europe/Berlin }');
    assert.equal(nodeTimeZone(validConfig(text)), 'Europe/Berlin');
    const bad = withLoop('').replace('node: { id: pi }', 'node: { id: pi, timeZone: Mars/Olympus }');
    assert.match(configErrors(bad).join('\n'), /^node\.timeZone: unknown time zone "Mars\/Olympus"/m);
  });

  test("node.timeZone absent: the system's zone (a valid IANA name, UTC at worst)", () => {
    assert.equal(nodeTimeZone({ node: {} }), systemTimeZone());
    assert.ok(systemTimeZone().length > 0);
  });

  test('splitPath turns a core message into a zod path', () => {
    assert.deepEqual(splitPath('schedule.weekly[2].preset: unknown preset "x"'), {
      path: ['schedule', 'weekly', 2, 'preset'],
      text: 'unknown preset "x"',
    });
  });
});
