/**
 * The autotune and tuning commands' payloads as a specification (parseCommand, kinds
 * `autotune` and `tuning`): what MQTT `<loop>/autotune/set` and `<loop>/tuning/set` and the HTTP
 * bodies of POST /api/loops/{loop}/autotune and /tuning (the same bytes) are accepted as, and
 * what is refused with a reason. Refused, never clamped or guessed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import { type CommandChange, parseCommand, resultPayload } from '../../src/control/commands.js';
import { MAX_AUTOTUNE_DURATION_S, MAX_CLOSED_LOOP_S } from '../../src/control/tuning-payloads.js';
import type { Mode } from '../../src/core/types.js';

const room = { limits: { min: 5, max: 30 }, modes: ['off', 'heat'] as Mode[] };

type Expect = { change: CommandChange; requestId?: string } | RegExp;

function check(kind: CommandKind, payload: string, expected: Expect): void {
  const outcome = parseCommand(kind, Buffer.from(payload, 'utf8'), room);
  if (expected instanceof RegExp) {
    assert.equal(outcome.accepted, false, `expected a refusal, got ${JSON.stringify(outcome)}`);
    assert.match((outcome as { reason: string }).reason, expected);
  } else {
    assert.deepEqual(outcome, { accepted: true, ...expected });
  }
}

function table(kind: CommandKind, rows: [payload: string, expected: Expect][]): void {
  for (const [payload, expected] of rows) {
    const shown = expected instanceof RegExp ? `refused ${expected}` : JSON.stringify(expected);
    test(`${JSON.stringify(payload)} → ${shown}`, () => check(kind, payload, expected));
  }
}

const start = (options: object = {}) => ({ change: { autotune: { action: 'start' as const, ...options } } });
const cancel = { change: { autotune: { action: 'cancel' as const } } };

describe('autotune/set: start ("start", {}), cancel, or JSON with options', () => {
  table('autotune', [
    // Empty is how a retained message is cleared: never a start.
    ['', /autotune takes "start", "cancel" or a JSON object/],
    ['  \n', /autotune takes "start", "cancel" or a JSON object/],
    ['start', start()],
    ['  start\n', start()],
    ['cancel', cancel],
    ['{}', start()],
    ['{"action":"start"}', start()],
    ['{"action":"cancel"}', cancel],
    ['{"side":"raise"}', start({ side: 'raise' })],
    [
      '{"action":"start","side":"lower","closedLoopS":60,"maxDurationS":21600,"requestId":"r1"}',
      { ...start({ side: 'lower', closedLoopS: 60, maxDurationS: 21_600 }), requestId: 'r1' },
    ],
    [`{"maxDurationS":${MAX_AUTOTUNE_DURATION_S}}`, start({ maxDurationS: MAX_AUTOTUNE_DURATION_S })],
    [`{"closedLoopS":${MAX_CLOSED_LOOP_S}}`, start({ closedLoopS: MAX_CLOSED_LOOP_S })],
    ['{"closedLoopS":0.5}', start({ closedLoopS: 0.5 })],
    // Plain words other than start and cancel.
    ['START', /autotune takes "start", "cancel" or a JSON object/],
    ['stop', /autotune takes/],
    ['reset', /autotune takes/],
    ['"start"', /autotune takes/],
    // JSON refused: unknown keys and values, bad numbers (never clamped), a cancel with options.
    ['{"action":"pause"}', /invalid autotune command: action/],
    ['{"side":"heat"}', /invalid autotune command: side/],
    ['{"side":"up"}', /invalid autotune command: side/],
    ['{"cycles":3}', /invalid autotune command: .*cycles/],
    ['{"closedLoopS":"60"}', /invalid autotune command: closedLoopS/],
    ['{"closedLoopS":0}', /closedLoopS must be a number of seconds above 0/],
    ['{"closedLoopS":-5}', /closedLoopS must be a number of seconds above 0/],
    ['{"maxDurationS":0}', /maxDurationS must be a number of seconds above 0/],
    [`{"maxDurationS":${MAX_AUTOTUNE_DURATION_S + 1}}`, /maxDurationS .* at most 604800/],
    ['{"maxDurationS":21600000}', /at most 604800 \(got 21600000\)/], // milliseconds sent as seconds
    [`{"closedLoopS":${MAX_CLOSED_LOOP_S + 1}}`, /closedLoopS .* at most 86400/],
    ['{"maxDurationS":1e999}', /maxDurationS/], // JSON.parse gives Infinity
    ['{"action":"cancel","side":"raise"}', /a cancel takes no options/],
    ['{"action":"cancel","maxDurationS":60}', /a cancel takes no options/],
    ['{"side":"raise","side":"lower"}', /duplicate key "side"/],
    ['{"side":', /payload is not JSON/],
    ['[]', /autotune takes/],
    [`{"requestId":"${'x'.repeat(65)}"}`, /requestId/],
  ]);

  test('a refused JSON command keeps its requestId, so its sender can correlate the result', () => {
    const outcome = parseCommand('autotune', Buffer.from('{"side":"up","requestId":"r-9"}'), room);
    assert.equal(outcome.accepted, false);
    assert.equal(outcome.requestId, 'r-9');
  });

  test('the size limit applies as to every command (1024 bytes)', () => {
    const padded = `{"action":"start"${' '.repeat(1100)}}`;
    check('autotune', padded, /payload is 1118 bytes, more than the 1024 allowed/);
  });

  test('invalid UTF-8 is refused', () => {
    const outcome = parseCommand('autotune', Buffer.from([0x73, 0xff, 0x74]), room);
    assert.deepEqual(outcome, { accepted: false, reason: 'payload is not valid UTF-8 text' });
  });
});

describe('tuning/set: a version, "latest", "config", or JSON {"version"}', () => {
  table('tuning', [
    ['latest', { change: { tuning: 'latest' } }],
    ['config', { change: { tuning: 'config' } }],
    [' 3\n', { change: { tuning: 3 } }],
    ['12', { change: { tuning: 12 } }],
    ['{"version":3}', { change: { tuning: 3 } }],
    ['{"version":"latest","requestId":"a"}', { change: { tuning: 'latest' }, requestId: 'a' }],
    ['{"version":"config"}', { change: { tuning: 'config' } }],
    // Refused: not a version.
    ['', /tuning takes "latest", "config", a version number/],
    ['0', /tuning version must be a whole number from 1/],
    ['03', /tuning version must be a whole number from 1 \(got "03"\)/],
    ['-1', /tuning takes/],
    ['3.5', /tuning takes/],
    ['v3', /tuning takes/],
    ['LATEST', /tuning takes/],
    ['99999999999999999999', /whole number from 1/],
    ['{"version":0}', /whole number from 1/],
    ['{"version":2.5}', /whole number from 1/],
    ['{"version":"3"}', /tuning version must be a number, "latest" or "config" \(got "3"\)/],
    ['{"version":"newest"}', /must be a number, "latest" or "config"/],
    ['{}', /invalid tuning command: version/],
    ['{"version":3,"apply":true}', /invalid tuning command/],
    ['{"version":3,"version":4}', /duplicate key "version"/],
  ]);
});

describe('the result of an accepted autotune or tuning command', () => {
  test('names the change asked for, as every result does', () => {
    const payload = resultPayload({
      accepted: true,
      change: { autotune: { action: 'start', side: 'raise' } },
      loop: 'room',
      atIso: '2026-11-30T12:00:00.000Z',
      generation: 7,
    });
    assert.deepEqual(JSON.parse(payload), {
      loop: 'room',
      accepted: true,
      change: { autotune: { action: 'start', side: 'raise' } },
      generation: 7,
      at: '2026-11-30T12:00:00.000Z',
    });
  });
});
