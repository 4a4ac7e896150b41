import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import { type CommandOutcome, parseCommand, resultPayload } from '../../src/control/commands.js';
import type { Mode } from '../../src/core/types.js';

// A heat-only room loop: setpoint limits 5..30, modes off and heat.
const room = { limits: { min: 5, max: 30 }, modes: ['off', 'heat'] as Mode[], step: 0.5 };
const text = (s: string) => Buffer.from(s, 'utf8');
const plainRefusal = (written: string) =>
  `setpoint must be a plain decimal number such as 21 or 21.5 (got "${written}")`;

type Expect = { setpoint?: number; mode?: Mode } | RegExp;

function check(kind: CommandKind, payload: Buffer, expected: Expect): void {
  const outcome = parseCommand(kind, payload, room);
  if (expected instanceof RegExp) {
    assert.equal(outcome.accepted, false, `expected a rejection, got ${JSON.stringify(outcome)}`);
    assert.match((outcome as { reason: string }).reason, expected);
  } else {
    assert.deepEqual(outcome, { accepted: true, change: expected });
  }
}

describe('setpoint/set: a plain decimal within the limits', () => {
  const table: [payload: string, expected: Expect][] = [
    ['21', { setpoint: 21 }],
    ['21.5', { setpoint: 21.5 }],
    ['21.25', { setpoint: 21.25 }], // off the UI step: accepted, the step is a UI hint
    ['5', { setpoint: 5 }], // limits are inclusive
    ['30', { setpoint: 30 }],
    ['21.50', { setpoint: 21.5 }], // a trailing zero within the precision
    ['21.125', { setpoint: 21.125 }], // three decimal places: the precision
    // Outside the limits: rejected, not clamped, and the reason names the limits.
    ['4.99', /setpoint 4\.99 is outside the limits 5\.\.30/],
    ['31', /outside the limits 5\.\.30/],
    ['-0', /setpoint 0 is outside/], // -0 is 0 (not "-0")
    // Not a plain decimal.
    ['', /plain decimal/],
    ['   ', /plain decimal/],
    ['1e1', /plain decimal/],
    ['0x10', /plain decimal/],
    ['Infinity', /plain decimal/],
    ['NaN', /plain decimal/],
    ['20,5', /plain decimal/],
    ['+20', /plain decimal/],
    ['.5', /plain decimal/],
    ['20.', /plain decimal/],
    ['"20"', /plain decimal/],
    ['20 21', /plain decimal/],
    ['20°C', /plain decimal/],
    ['{"setpoint":20}', /plain decimal/],
    ['[20]', /plain decimal/],
    ['２０', /plain decimal/], // full-width digits
    // Lenient spellings are refused, never read as something else.
    [' 20 ', /no spaces/],
    ['  22\n', /no spaces/],
    ['\t20\r\n', /no spaces/],
    ['00020', /no leading zeros/],
    ['007', /no leading zeros/],
    ['-05', /no leading zeros/],
    [' 2 0 ', /plain decimal/],
    ['20.0000000000000000000001', /more than 3 decimal places/], // would be read as 20
    ['21.1234', /more than 3 decimal places/],
  ];
  for (const [payload, expected] of table) {
    test(`${JSON.stringify(payload)} → ${expected instanceof RegExp ? `rejected ${expected}` : JSON.stringify(expected)}`, () =>
      check('setpoint', text(payload), expected));
  }

  test('-0 is accepted as 0 where 0 is allowed', () => {
    const outcome = parseCommand('setpoint', text('-0.0'), { limits: { min: -5, max: 5 }, modes: ['off'] });
    assert.ok(outcome.accepted);
    assert.ok(Object.is(outcome.change.setpoint, 0), 'setpoint is +0');
  });

  test('the reason quotes a hostile payload escaped and shortened', () => {
    const outcome = parseCommand('setpoint', text(`\u001b[31m${'9'.repeat(100)}x`), room);
    assert.equal(outcome.accepted, false);
    const { reason } = outcome as { reason: string };
    assert.ok(!reason.includes('\u001b'), 'no raw escape character');
    assert.ok(reason.includes('\\u001b'));
    assert.ok(reason.length < 120, reason);
  });
});

describe('mode/set: one of the loop modes, exactly', () => {
  const table: [payload: string, expected: Expect][] = [
    ['heat', { mode: 'heat' }],
    ['off', { mode: 'off' }],
    ['heat\n', { mode: 'heat' }],
    ['cool', /mode "cool" is not allowed for this loop \(allowed: off, heat\)/], // a Mode, not this loop's
    ['HEAT', /not allowed.*allowed: off, heat/],
    ['Heat', /not allowed/],
    ['heating', /not allowed/],
    ['', /mode "" is not allowed/],
    ['"heat"', /not allowed/],
    ['{"mode":"heat"}', /not allowed/],
    ['__proto__', /not allowed/],
    ['constructor', /not allowed/],
    ['toString', /not allowed/],
  ];
  for (const [payload, expected] of table) {
    test(`${JSON.stringify(payload)} → ${expected instanceof RegExp ? `rejected ${expected}` : JSON.stringify(expected)}`, () =>
      check('mode', text(payload), expected));
  }
});

describe('set: a strict JSON object {setpoint?, mode?, requestId?}', () => {
  const table: [payload: string, expected: CommandOutcome][] = [
    ['{"setpoint": 21.5}', { accepted: true, change: { setpoint: 21.5 } }],
    ['{"mode": "off"}', { accepted: true, change: { mode: 'off' } }],
    [
      '{"setpoint": 22, "mode": "heat", "requestId": "r-1"}',
      { accepted: true, change: { setpoint: 22, mode: 'heat' }, requestId: 'r-1' },
    ],
    // A JSON number is read as written: one plain spelling, within the precision.
    ['{"setpoint": 2.2e1}', { accepted: false, reason: plainRefusal('2.2e1') }],
    [
      '{"setpoint": 20.0000000000000000000001}',
      {
        accepted: false,
        reason:
          'setpoint "20.0000000000000000000001" has more than 3 decimal places: send it rounded as you mean it',
      },
    ],
    [
      '{"setpoint": 21.50, "requestId": "r-5"}',
      { accepted: true, change: { setpoint: 21.5 }, requestId: 'r-5' },
    ],
    [
      '{"requestId": "r-6", "setpoint":\n 1E1 }',
      { accepted: false, reason: plainRefusal('1E1'), requestId: 'r-6' },
    ],
    // Duplicate keys: JSON.parse would keep the last one silently; which one the sender meant
    // is unknown, so the command is rejected (with its requestId, when that one is unique).
    [
      '{"setpoint": 99, "setpoint": 6}',
      {
        accepted: false,
        reason: 'duplicate key "setpoint" in the JSON object: send each field once',
      },
    ],
    [
      '{"setpoint": 20, "mode": "heat", "set\\u0070oint": 21, "requestId": "r-4"}',
      {
        accepted: false,
        reason: 'duplicate key "setpoint" in the JSON object: send each field once',
        requestId: 'r-4',
      },
    ],
    [
      '{"mode": "heat", "requestId": "a", "requestId": "b"}',
      { accepted: false, reason: 'duplicate key "requestId" in the JSON object: send each field once' },
    ],
    // Keys inside strings or nested values are not top-level keys.
    [
      '{"requestId": "\\"setpoint\\": {\\"setpoint\\"", "setpoint": 21}',
      { accepted: true, change: { setpoint: 21 }, requestId: '"setpoint": {"setpoint"' },
    ],
    // The requestId comes back with a rejection, so the sender can correlate it.
    [
      '{"setpoint": 99, "requestId": "r-2"}',
      { accepted: false, reason: 'setpoint 99 is outside the limits 5..30', requestId: 'r-2' },
    ],
    [
      '{"mode": "cool", "setpoint": 20, "requestId": "r-3"}',
      {
        accepted: false,
        reason: 'mode "cool" is not allowed for this loop (allowed: off, heat)',
        requestId: 'r-3',
      },
    ],
  ];
  for (const [payload, expected] of table) {
    test(`${payload} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseCommand('json', text(payload), room), expected);
    });
  }

  const rejected: [payload: string, reason: RegExp][] = [
    ['{}', /needs a setpoint, a mode or both/],
    ['{"requestId": "x"}', /needs a setpoint, a mode or both/],
    ['{"setpoint": "21"}', /setpoint:.*number/], // a number as a string
    ['{"setpoint": null}', /setpoint:/],
    ['{"setpoint": [21]}', /setpoint:/],
    ['{"setpoint": {"value": 21}}', /setpoint:/], // nested
    ['{"setpoint": true}', /setpoint:/],
    ['{"mode": 1}', /mode:/],
    ['{"mode": ["heat"]}', /mode:/],
    ['{"setpoint": 21, "extra": 1}', /extra/], // unknown key
    ['{"__proto__": {"setpoint": 21}}', /__proto__/], // prototype pollution attempt
    ['{"__proto__": {"isAdmin": true}, "setpoint": 21}', /__proto__/],
    ['{"constructor": {"prototype": {"x": 1}}, "setpoint": 21}', /constructor/],
    [`{"setpoint": 21, "requestId": "${'x'.repeat(65)}"}`, /requestId/],
    ['{"setpoint": 21, "requestId": 7}', /requestId/],
    ['[{"setpoint": 21}]', /invalid command/], // an array
    ['21', /invalid command/], // a bare number is not an object
    ['"21"', /invalid command/],
    ['null', /invalid command/],
    ['', /not JSON/],
    ['{setpoint: 21}', /not JSON/],
    ["{'setpoint': 21}", /not JSON/],
    ['{"setpoint": 21', /not JSON/],
    ['{"setpoint": NaN}', /not JSON/],
    ['{"setpoint": Infinity}', /not JSON/],
    ['{"setpoint": 1e400}', /setpoint/], // JSON.parse gives Infinity
  ];
  for (const [payload, reason] of rejected) {
    test(`${payload.length > 60 ? `${payload.slice(0, 60)}…` : payload} → rejected ${reason}`, () => {
      const outcome = parseCommand('json', text(payload), room);
      assert.equal(outcome.accepted, false, JSON.stringify(outcome));
      assert.match((outcome as { reason: string }).reason, reason);
    });
  }

  test('a prototype pollution attempt leaves Object.prototype untouched', () => {
    parseCommand('json', text('{"__proto__": {"polluted": true}, "setpoint": 21}'), room);
    parseCommand('json', text('{"constructor": {"prototype": {"polluted": true}}}'), room);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  test('deeply nested JSON within the size limit is rejected, not a crash', () => {
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`;
    assert.equal(parseCommand('json', text(deep), room).accepted, false);
  });

  test('a requestId that is too long is not echoed', () => {
    const outcome = parseCommand('json', text(`{"setpoint": 99, "requestId": "${'x'.repeat(65)}"}`), room);
    assert.equal(outcome.requestId, undefined);
  });
});

describe('fault/reset: empty or "reset"', () => {
  const table: [payload: string, accepted: boolean][] = [
    ['', true],
    ['reset', true],
    [' reset\n', true],
    ['RESET', false],
    ['1', false],
    ['{"reset": true}', false],
    ['resetx', false],
  ];
  for (const [payload, accepted] of table) {
    test(`${JSON.stringify(payload)} → ${accepted ? 'accepted' : 'rejected'}`, () => {
      const outcome = parseCommand('faultReset', text(payload), room);
      if (accepted) assert.deepEqual(outcome, { accepted: true, change: { faultReset: true } });
      else assert.match((outcome as { reason: string }).reason, /empty payload or "reset"/);
    });
  }
});

describe('bytes: the size limit first, then UTF-8', () => {
  const kinds: CommandKind[] = ['setpoint', 'mode', 'json', 'faultReset'];
  for (const kind of kinds) {
    test(`${kind}: a payload over 1024 bytes is rejected before it is read`, () => {
      const outcome = parseCommand(kind, Buffer.alloc(1025, 0x20), room);
      assert.deepEqual(outcome, {
        accepted: false,
        reason: 'payload is 1025 bytes, more than the 1024 allowed',
      });
    });
    test(`${kind}: invalid UTF-8 is rejected`, () => {
      const outcome = parseCommand(kind, Buffer.from([0x32, 0x31, 0xff, 0xfe]), room);
      assert.deepEqual(outcome, { accepted: false, reason: 'payload is not valid UTF-8 text' });
    });
  }

  test('the size limit is an option', () => {
    assert.equal(parseCommand('setpoint', text('21'), room, { maxPayloadBytes: 1 }).accepted, false);
    assert.equal(parseCommand('setpoint', text('21'), room, { maxPayloadBytes: 2 }).accepted, true);
  });

  test('binary junk within the limit is rejected by every kind', () => {
    const junk = Buffer.from([0x00, 0x01, 0x02, 0x7f, 0x1b, 0x5b]);
    for (const kind of kinds) assert.equal(parseCommand(kind, junk, room).accepted, false, kind);
  });

  test('a UTF-8 byte order mark is whitespace to trim', () => {
    assert.deepEqual(parseCommand('setpoint', Buffer.from([0xef, 0xbb, 0xbf, 0x32, 0x31]), room), {
      accepted: true,
      change: { setpoint: 21 },
    });
  });
});

describe('resultPayload: one JSON reply per command on <loop>/result', () => {
  const atIso = '2024-01-02T03:04:05.000Z';

  test('accepted: the change and the generation it produced', () => {
    const outcome = parseCommand('json', text('{"setpoint": 21.5, "requestId": "r-1"}'), room);
    assert.deepEqual(JSON.parse(resultPayload({ ...outcome, loop: 'room', atIso, generation: 8 })), {
      loop: 'room',
      requestId: 'r-1',
      accepted: true,
      change: { setpoint: 21.5 },
      generation: 8,
      at: atIso,
    });
  });

  test('rejected: the reason, and nothing about a change', () => {
    const outcome = parseCommand('setpoint', text('99'), room);
    assert.deepEqual(JSON.parse(resultPayload({ ...outcome, loop: 'room', atIso })), {
      loop: 'room',
      accepted: false,
      reason: 'setpoint 99 is outside the limits 5..30',
      at: atIso,
    });
  });
});
