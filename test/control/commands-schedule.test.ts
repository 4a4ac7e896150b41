/**
 * The preset and profile commands' payloads as a specification (parseCommand, kinds `preset`,
 * `profile`, and the preset field of the `set` JSON command): what MQTT `<loop>/preset/set`,
 * `<loop>/profile/set` and the HTTP bodies of POST /api/loops/{loop}/preset and /profile (the same
 * bytes) are accepted as, and what is refused with a reason. Whether the loop has the preset or
 * profile is the command path's check (test/control/schedule-commands.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import { type CommandChange, parseCommand } from '../../src/control/commands.js';
import type { Mode } from '../../src/core/types.js';

const room = { limits: { min: 5, max: 30 }, modes: ['off', 'heat'] as Mode[] };

type Expect = { change: CommandChange; requestId?: string } | RegExp;

function table(kind: CommandKind, rows: [payload: string, expected: Expect][]): void {
  for (const [payload, expected] of rows) {
    const shown = expected instanceof RegExp ? `refused ${expected}` : JSON.stringify(expected);
    test(`${JSON.stringify(payload)} → ${shown}`, () => {
      const outcome = parseCommand(kind, Buffer.from(payload, 'utf8'), room);
      if (expected instanceof RegExp) {
        assert.equal(outcome.accepted, false, `expected a refusal, got ${JSON.stringify(outcome)}`);
        assert.match((outcome as { reason: string }).reason, expected);
      } else {
        assert.deepEqual(outcome, { accepted: true, ...expected });
      }
    });
  }
}

const preset = (name: string | null, requestId?: string) => ({
  change: { preset: name },
  ...(requestId === undefined ? {} : { requestId }),
});
const profile = (change: NonNullable<CommandChange['profile']>, requestId?: string) => ({
  change: { profile: change },
  ...(requestId === undefined ? {} : { requestId }),
});

describe('preset/set: a name, "none", or JSON {preset: name|null}', () => {
  table('preset', [
    ['eco', preset('eco')],
    ['  comfort\n', preset('comfort')],
    ['my-preset_2', preset('my-preset_2')],
    // What Home Assistant sends when a person picks "none": no preset, the setpoint stays.
    ['none', preset(null)],
    ['{"preset": "eco"}', preset('eco')],
    ['{"preset": null, "requestId": "r1"}', preset(null, 'r1')],
    ['{"preset": "none"}', preset(null)],
    ['{"preset": "eco", "requestId": "r2"}', preset('eco', 'r2')],
    // Empty is how a retained message is cleared: never a selection.
    ['', /an empty payload only clears a retained message/],
    ['   ', /an empty payload only clears a retained message/],
    ['{"preset": ""}', /preset name is empty/],
    ['{"preset": 17}', /invalid preset command: preset:/],
    ['{"name": "eco"}', /invalid preset command/],
    ['{"preset": "eco", "extra": 1}', /invalid preset command/],
    ['{"preset": "eco", "preset": "away"}', /duplicate key "preset"/],
    ['{"preset": "eco"', /payload is not JSON/],
    ['eco\u0007', /control characters/],
    ['x'.repeat(65), /longer than 64 characters/],
  ]);

  test('a refused JSON command keeps its requestId (the sender can correlate)', () => {
    const outcome = parseCommand('preset', Buffer.from('{"preset": 3, "requestId": "keep"}'), room);
    assert.deepEqual([outcome.accepted, outcome.requestId], [false, 'keep']);
  });

  test('an oversize payload is refused before it is read', () => {
    const outcome = parseCommand('preset', Buffer.alloc(2_000, 'a'), room);
    assert.equal(outcome.accepted, false);
    assert.match((outcome as { reason: string }).reason, /2000 bytes, more than the 1024 allowed/);
  });

  test('bytes that are not UTF-8 are refused', () => {
    const outcome = parseCommand('preset', Buffer.from([0x65, 0xff, 0x63]), room);
    assert.match((outcome as { reason: string }).reason, /not valid UTF-8/);
  });
});

describe('profile/set: "start NAME", pause, resume, stop, or JSON {action, name?}', () => {
  table('profile', [
    ['start ale', profile({ action: 'start', name: 'ale' })],
    ['  start   ale  ', profile({ action: 'start', name: 'ale' })],
    ['pause', profile({ action: 'pause' })],
    ['resume\n', profile({ action: 'resume' })],
    ['stop', profile({ action: 'stop' })],
    [
      '{"action": "start", "name": "ale", "requestId": "r3"}',
      profile({ action: 'start', name: 'ale' }, 'r3'),
    ],
    ['{"action": "pause"}', profile({ action: 'pause' })],
    ['{"action": "stop", "requestId": "r4"}', profile({ action: 'stop' }, 'r4')],
    ['', /profile takes "start NAME", "pause", "resume", "stop"/],
    ['start', /a start needs the profile to start/],
    ['{"action": "start"}', /a start needs the profile to start/],
    ['{"action": "start", "name": " "}', /a start needs the profile to start/],
    ['{"action": "pause", "name": "ale"}', /a pause takes no name/],
    ['{"action": "restart"}', /invalid profile command: action:/],
    ['{"name": "ale"}', /invalid profile command/],
    ['PAUSE', /profile takes/],
    ['toggle', /profile takes/],
    ['pause now', /profile takes/],
    ['{"action": "stop", "action": "start"}', /duplicate key "action"/],
    ['{"action": ', /payload is not JSON/],
    ['start al\u0000e', /control characters/],
  ]);
});

describe('set (JSON): {"preset": …} alone', () => {
  table('json', [
    ['{"preset": "eco"}', preset('eco')],
    ['{"preset": null, "requestId": "r5"}', preset(null, 'r5')],
    ['{"preset": "eco", "setpoint": 20}', /a preset sets the setpoint .* send it alone/],
    ['{"preset": "eco", "mode": "heat"}', /send it alone/],
    ['{"preset": ""}', /preset name is empty/],
    ['{"setpoint": 21}', { change: { setpoint: 21 } }],
    ['{}', /command needs a setpoint, a mode or both, or a preset/],
  ]);
});
