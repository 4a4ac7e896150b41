/** A loop's `autotune` section: defaults, validation messages, and that it leaves the loop's hash alone. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { loopSectionHash } from '../../src/config/plan.js';

const DEMO = fs.readFileSync('config/demo.yaml', 'utf8');
const ROOM_MODE = '    raise: room_heater # only a heater, so the modes are off and heat\n';
const HUMIDITY_RAISE = '    raise: fogger # only a humidifier: modes off and humidify\n';

/** The demo with `section` (one YAML line, `autotune: …`) added to the loop after `anchor`. */
function demoWith(section: string, anchor = ROOM_MODE): string {
  assert.ok(DEMO.includes(anchor), 'the demo changed: update this test');
  return DEMO.replace(anchor, `${anchor}    ${section}\n`);
}

function errorsOf(text: string): string[] {
  const loaded = parseConfigText(text);
  return loaded.ok ? [] : loaded.errors;
}

describe('loops.<id>.autotune', () => {
  test('absent: no section (requests use the defaults)', () => {
    const loaded = parseConfigText(DEMO);
    assert.ok(loaded.ok);
    assert.equal(loaded.config.loops.room!.autotune, undefined);
  });

  test('given empty, autoApply defaults to false', () => {
    const loaded = parseConfigText(demoWith('autotune: {}'));
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
    assert.deepEqual(loaded.config.loops.room!.autotune, { autoApply: false });
  });

  test('given every key, they are taken as written', () => {
    const loaded = parseConfigText(
      demoWith('autotune: { autoApply: true, closedLoopS: 240, maxDurationS: 21600 }'),
    );
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
    assert.deepEqual(loaded.config.loops.room!.autotune, {
      autoApply: true,
      closedLoopS: 240,
      maxDurationS: 21600,
    });
  });

  test('adding it changes the loop section hash (a reload applies it), an unrelated loop keeps its own', () => {
    const before = parseConfigText(DEMO);
    const after = parseConfigText(demoWith('autotune: { autoApply: true }'));
    assert.ok(before.ok && after.ok);
    assert.notEqual(loopSectionHash(before.config, 'room'), loopSectionHash(after.config, 'room'));
    assert.equal(loopSectionHash(before.config, 'fermenter'), loopSectionHash(after.config, 'fermenter'));
  });

  for (const [label, section, expected] of [
    [
      'closedLoopS 0',
      'autotune: { closedLoopS: 0 }',
      /^loops\.room\.autotune\.closedLoopS: must be > 0 \(got 0\)$/,
    ],
    [
      'maxDurationS negative',
      'autotune: { maxDurationS: -1 }',
      /^loops\.room\.autotune\.maxDurationS: must be > 0 \(got -1\)$/,
    ],
    [
      'autoApply not a boolean',
      'autotune: { autoApply: "yes" }',
      /^loops\.room\.autotune\.autoApply: expected true or false, got "yes"$/,
    ],
    [
      'an unknown key',
      'autotune: { cycles: 4 }',
      /^loops\.room\.autotune\.cycles: unknown key \(allowed: autoApply, closedLoopS, maxDurationS\)$/,
    ],
  ] as const) {
    test(`${label}: one error naming the path`, () => {
      const errors = errorsOf(demoWith(section));
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.match(errors[0]!, expected);
    });
  }

  test('on a hysteresis loop: refused, saying why', () => {
    const text = demoWith('autotune: { autoApply: true }', HUMIDITY_RAISE).replace(
      /(greenhouse_humidity:[\s\S]*?controller:)[\s\S]*?tiS: 480\n/,
      '$1\n      type: hysteresis\n',
    );
    const errors = errorsOf(text);
    assert.deepEqual(errors, [
      'loops.greenhouse_humidity.autotune: needs controller type pid (an autotune computes PID gains; hysteresis has none)',
    ]);
  });
});
