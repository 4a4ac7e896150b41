/** `planTunings`: the gains each PID loop will regulate with once a file is applied. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { type PlanTuningRow, planTunings } from '../../src/config/plan.js';
import type { Config } from '../../src/config/schema.js';

const DEMO = fs.readFileSync('config/demo.yaml', 'utf8');

function config(text: string): Config {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  return loaded.config;
}

const CURRENT = config(DEMO);
/** The demo with the room's kp changed in the file. */
const ROOM_KP_CHANGED = config(DEMO.replace('kp: 0.75 #', 'kp: 0.6 #'));
const V3 = { version: 3, gains: { kp: 0.9, tiS: 700, tdS: 0 } };

const roomLine = (rows: PlanTuningRow[], next = CURRENT) =>
  planTunings(CURRENT, next, rows).find((line) => line.startsWith('tuning room:'));

describe('planTunings', () => {
  test('one line per PID loop, sorted; the file gains when nothing is stored', () => {
    assert.deepEqual(planTunings(CURRENT, CURRENT, []), [
      'tuning fermenter: config (kp 1, tiS 720 s, tdS 0 s)',
      'tuning greenhouse_humidity: config (kp 0.19, tiS 480 s, tdS 0 s)',
      'tuning room: config (kp 0.75, tiS 960 s, tdS 40 s)',
    ]);
  });

  for (const [label, rows, next, expected] of [
    [
      'a tuning in force',
      [{ loop: 'room', tuning: V3, lastTuningVersion: 3 }],
      CURRENT,
      "tuning room: version 3 (kp 0.9, tiS 700 s, tdS 0 s), not the file's",
    ],
    [
      'a newer proposal',
      [{ loop: 'room', tuning: V3, lastTuningVersion: 4 }],
      CURRENT,
      "tuning room: version 3 (kp 0.9, tiS 700 s, tdS 0 s), not the file's; version 4 proposed, not applied (homeostat tuning room latest)",
    ],
    [
      'a proposal with the file gains in force',
      [{ loop: 'room', lastTuningVersion: 1 }],
      CURRENT,
      'tuning room: config (kp 0.75, tiS 960 s, tdS 40 s); version 1 proposed, not applied (homeostat tuning room latest)',
    ],
    [
      'the file changes the gains',
      [{ loop: 'room', tuning: V3, lastTuningVersion: 3 }],
      ROOM_KP_CHANGED,
      'tuning room: config (kp 0.6, tiS 960 s, tdS 40 s): the file changes the gains, so version 3 (kp 0.9, tiS 700 s, tdS 0 s) is set aside',
    ],
  ] as const) {
    test(label, () => {
      assert.equal(roomLine([...rows], next), expected);
    });
  }

  test('with no config applied before, the gains cannot have changed: a stored tuning shows in force', () => {
    const lines = planTunings(undefined, CURRENT, [{ loop: 'room', tuning: V3, lastTuningVersion: 3 }]);
    assert.ok(lines.includes("tuning room: version 3 (kp 0.9, tiS 700 s, tdS 0 s), not the file's"));
  });

  test('a tuning with both sides of a split-range loop shows each side', () => {
    const lines = planTunings(CURRENT, CURRENT, [
      { loop: 'room', tuning: { ...V3, lowerGains: { kp: 0.05, tiS: 1500, tdS: 0 } }, lastTuningVersion: 3 },
    ]);
    assert.ok(
      lines.includes(
        "tuning room: version 3 (raise kp 0.9, tiS 700 s, tdS 0 s; lower kp 0.05, tiS 1500 s, tdS 0 s), not the file's",
      ),
      lines.join('\n'),
    );
  });

  test('the file changing only its lower side sets a tuning aside', () => {
    const withLower = (kp: number) =>
      config(
        DEMO.replace('      kp: 1.0\n', `      kp: 1.0\n      lower: { kp: ${kp}, tiS: 1500, tdS: 0 }\n`),
      );
    const before = withLower(0.05);
    const after = withLower(0.07);
    const line = planTunings(before, after, [{ loop: 'fermenter', tuning: V3, lastTuningVersion: 3 }]).find(
      (l) => l.startsWith('tuning fermenter:'),
    );
    assert.match(line ?? '', /the file changes the gains, so version 3/);
  });
});
