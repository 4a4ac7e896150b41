import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import {
  canonicalJson,
  formatPlan,
  loopSectionHash,
  planChanges,
  summarizePlan,
} from '../../src/config/plan.js';
import type { Config } from '../../src/config/schema.js';
import { redactConfigText } from '../../src/redact.js';

/** A room heated by a relay (PID) and an attic heated by a continuous heater (hysteresis). */
const BASE = `
version: 1
node:
  id: test
simulation:
  plants:
    room: { ambient: 10, timeConstantS: 600 }
    attic: { ambient: 5, timeConstantS: 300 }
sensors:
  t_room: { kind: simulated, plant: room }
  t_attic: { kind: simulated, plant: attic }
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20 }
  attic_heater: { kind: simulated_continuous, plant: attic, gain: 10 }
loops:
  room:
    sensor: t_room
    raise: heater
    setpoint: 18
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
  attic:
    sensor: t_attic
    raise: attic_heater
    setpoint: 10
    limits: { min: 0, max: 20 }
    controller: { type: hysteresis }
`;

/** BASE with the attic loop (and its sensor, actuator, plant) gone. */
const WITHOUT_ATTIC = edits(
  BASE,
  ['    attic: { ambient: 5, timeConstantS: 300 }\n', ''],
  ['  t_attic: { kind: simulated, plant: attic }\n', ''],
  ['  attic_heater: { kind: simulated_continuous, plant: attic, gain: 10 }\n', ''],
  [/ {2}attic:\n(?: {4}.*\n)+/, ''],
);

/** BASE plus a greenhouse loop with its own sensor, heater and plant. */
const WITH_GREENHOUSE = edits(
  BASE,
  ['  plants:\n', '  plants:\n    greenhouse: { ambient: 8, timeConstantS: 900 }\n'],
  ['sensors:\n', 'sensors:\n  t_green: { kind: simulated, plant: greenhouse }\n'],
  ['actuators:\n', 'actuators:\n  green_heater: { kind: simulated_relay, plant: greenhouse, gain: 15 }\n'],
  [
    'loops:\n',
    'loops:\n  greenhouse:\n    sensor: t_green\n    raise: green_heater\n    setpoint: 12\n' +
      '    limits: { min: 0, max: 30 }\n    controller: { type: hysteresis }\n',
  ],
);

describe('planChanges + formatPlan: given the applied config and a new one, the plan lines', () => {
  const cases: Array<{ when: string; current: string; next: string; lines: string[]; redacted?: boolean }> = [
    { when: 'nothing changed', current: BASE, next: BASE, lines: [] },
    {
      when: 'a default is written out (minOnS: 0, seed: 1)',
      current: BASE,
      next: edits(BASE, ['gain: 20 }', 'gain: 20, minOnS: 0 }'], ['  plants:\n', '  seed: 1\n  plants:\n']),
      lines: [],
    },
    {
      when: 'only the YAML key order changes',
      current: BASE,
      next: edits(BASE, ['{ ambient: 10, timeConstantS: 600 }', '{ timeConstantS: 600, ambient: 10 }']),
      lines: [],
    },
    {
      when: 'the setpoint changes',
      current: BASE,
      next: edits(BASE, ['setpoint: 18', 'setpoint: 19']),
      lines: ['~ loops.room.setpoint 18 → 19'],
    },
    {
      when: 'a loop is added with its sensor, actuator and plant (one line each)',
      current: BASE,
      next: WITH_GREENHOUSE,
      lines: [
        '+ loops.greenhouse (loop added)',
        '+ sensors.t_green (sensor added)',
        '+ actuators.green_heater (actuator added)',
        '+ simulation.plants.greenhouse (plant added)',
      ],
    },
    {
      when: 'a loop is removed with its sensor, actuator and plant',
      current: BASE,
      next: WITHOUT_ATTIC,
      lines: [
        '- loops.attic (loop removed)',
        '- sensors.t_attic (sensor removed)',
        '- actuators.attic_heater (actuator removed)',
        '- simulation.plants.attic (plant removed)',
      ],
    },
    {
      when: "an actuator's minimum on time changes",
      current: BASE,
      next: edits(BASE, ['gain: 20 }', 'gain: 20, minOnS: 120 }']),
      lines: ['~ actuators.heater.minOnS 0 → 120'],
    },
    {
      when: 'a sensor period changes: the resolved staleness of sensor and loop follows',
      current: BASE,
      next: edits(BASE, [
        '{ kind: simulated, plant: room }',
        '{ kind: simulated, plant: room, periodS: 20 }',
      ]),
      lines: [
        '~ loops.room.staleAfterS 30 → 60',
        '~ sensors.t_room.periodS 10 → 20',
        '~ sensors.t_room.staleAfterS 30 → 60',
      ],
    },
    {
      when: 'a lower actuator is added to a loop (a field appears, the resolved mode follows)',
      current: BASE,
      next: edits(
        BASE,
        ['    raise: heater\n', '    raise: heater\n    lower: cooler\n'],
        ['actuators:\n', 'actuators:\n  cooler: { kind: simulated_relay, plant: room, gain: -15 }\n'],
      ),
      lines: [
        '+ loops.room.lower "cooler"',
        '~ loops.room.mode "heat" → "heat_cool"',
        '+ actuators.cooler (actuator added)',
      ],
    },
    {
      when: 'strings, fractions, nested objects and arrays change',
      current: BASE,
      next: edits(
        BASE,
        ['    sensor: t_room\n', '    name: Living room\n    sensor: t_room\n'],
        ['kp: 0.2 }', 'kp: 0.2, model: { gain: 20, ambient: 10 } }'],
        [
          '{ ambient: 10, timeConstantS: 600 }',
          '{ ambient: 10, timeConstantS: 600, quantization: 0.0625, disturbances: [{ atS: 3600, offset: -3 }] }',
        ],
      ),
      lines: [
        '+ loops.room.controller.model {"ambient":10,"gain":20}',
        '~ loops.room.name "room" → "Living room"',
        '~ simulation.plants.room.disturbances [] → [{"atS":3600,"offset":-3}]',
        '~ simulation.plants.room.quantization 0 → 0.0625',
      ],
    },
    {
      when: 'node and storage change (sections after the simulation, in a fixed order)',
      current: BASE,
      next: edits(BASE, ['  id: test\n', '  id: test\n  name: Test bench\nstorage:\n  memoryFlushS: 60\n']),
      lines: ['~ node.name "test" → "Test bench"', '~ storage.memoryFlushS 600 → 60'],
    },
    {
      when: 'a key is renamed to its new name (bandC → band, same value)',
      current: edits(BASE, ['gain: 20 }', 'gain: 20, bandC: 0.3 }']),
      next: edits(BASE, ['gain: 20 }', 'gain: 20, band: 0.3 }']),
      lines: [],
    },
    {
      when: 'the gpio and mqtt blocks are written out with their defaults',
      current: edits(BASE, ['  id: test\n', '  id: test\nmqtt: {}\n']),
      next: edits(BASE, [
        '  id: test\n',
        '  id: test\nmqtt: { clientId: homeostat-test, baseTopic: homeostat }\ngpio: { sysfsRoot: /sys }\n',
      ]),
      lines: [],
    },
    {
      when: 'the API token is changed (it is printed redacted, as the database keeps it)',
      current: edits(BASE, [
        '  id: test\n',
        '  id: test\nhttp:\n  host: 0.0.0.0\n  token: first-secret-token-1234\n',
      ]),
      next: edits(BASE, [
        '  id: test\n',
        '  id: test\nhttp:\n  host: 0.0.0.0\n  token: other-secret-token-5678\n  port: 9000\n',
      ]),
      lines: ['~ http.port 8734 → 9000'],
      redacted: true,
    },
    {
      when: 'an optional field is removed',
      current: edits(BASE, ['  id: test\n', '  id: test\nstorage:\n  path: /var/lib/homeostat/state.db\n']),
      next: BASE,
      lines: ['- storage.path "/var/lib/homeostat/state.db"'],
    },
  ];
  for (const { when, current, next, lines, redacted } of cases) {
    test(`when ${when}`, () => {
      const text = (config: string) => (redacted ? redactConfigText(config) : config);
      assert.deepEqual(formatPlan(planChanges(parse(text(current)), parse(text(next)))), lines);
    });
  }

  test('when nothing was applied yet, every loop, sensor, actuator and plant is one add line', () => {
    assert.deepEqual(formatPlan(planChanges(undefined, parse(WITHOUT_ATTIC))), [
      '+ loops.room (loop added)',
      '+ sensors.t_room (sensor added)',
      '+ actuators.heater (actuator added)',
      '+ simulation.plants.room (plant added)',
      '+ simulation.seed 1',
      '+ node {"id":"test","name":"test"}',
      '+ gpio {"sysfsRoot":"/sys"}',
      '+ storage {"downsampleS":300,"downsampledRetentionS":31536000,"eventRetentionS":7776000,"memoryFlushS":600,"rawRetentionS":604800}',
      '+ http {"allowedHosts":[],"enabled":true,"host":"127.0.0.1","port":8734,"publicReads":false}',
      '+ alerts {"capPerHour":10,"channels":{},"outboxLimit":1000,"rules":{"autotune":true,"faultedForS":60,"interlockForS":1800,"latchedForS":0,"profile":true,"storageForS":60,"unconfirmedForS":120}}',
    ]);
  });

  test('changes carry both resolved values, not text', () => {
    const changes = planChanges(parse(BASE), parse(edits(BASE, ['kp: 0.2 }', 'kp: 0.2, tdS: 60 }'])));
    assert.deepEqual(
      changes.map((c) => c.path),
      ['loops.room.controller.derivativeFilterS', 'loops.room.controller.tdS'],
    );
    assert.deepEqual(changes[1], { op: 'change', path: 'loops.room.controller.tdS', before: 0, after: 60 });
  });

  test('an added loop carries its whole resolved section', () => {
    const added = planChanges(parse(BASE), parse(WITH_GREENHOUSE)).find((c) => c.path === 'loops.greenhouse');
    assert.ok(added?.op === 'add');
    const loop = added.after as Config['loops'][string];
    assert.deepEqual(
      { mode: loop.mode, name: loop.name, staleAfterS: loop.staleAfterS },
      {
        mode: 'heat',
        name: 'greenhouse',
        staleAfterS: 30,
      },
    );
  });

  test('formatPlan groups lines by section in the fixed order, whatever the input order', () => {
    assert.deepEqual(
      formatPlan([
        { op: 'change', path: 'storage.memoryFlushS', before: 30, after: 60 },
        { op: 'add', path: 'sensors.t2', after: {} },
        { op: 'remove', path: 'loops.b', before: {} },
        { op: 'add', path: 'loops.a', after: {} },
        { op: 'remove', path: 'mqtt', before: { url: 'mqtt://x' } },
      ]),
      [
        '- loops.b (loop removed)',
        '+ loops.a (loop added)',
        '+ sensors.t2 (sensor added)',
        '- mqtt {"url":"mqtt://x"}',
        '~ storage.memoryFlushS 30 → 60',
      ],
    );
  });
});

describe('summarizePlan', () => {
  const cases: Array<{ given: string; current: string | undefined; next: string; summary: string }> = [
    { given: 'no changes', current: BASE, next: BASE, summary: 'No changes.' },
    {
      given: 'a loop added and a setpoint changed',
      current: BASE,
      next: edits(WITH_GREENHOUSE, ['setpoint: 18', 'setpoint: 19']),
      summary: 'Plan: 4 to add, 1 to change, 0 to remove.',
    },
    {
      given: 'a loop removed',
      current: BASE,
      next: WITHOUT_ATTIC,
      summary: 'Plan: 0 to add, 0 to change, 4 to remove.',
    },
  ];
  for (const { given, current, next, summary } of cases) {
    test(`given ${given}: ${summary}`, () => {
      const before = current === undefined ? undefined : parse(current);
      assert.equal(summarizePlan(planChanges(before, parse(next))), summary);
    });
  }
});

describe('loopSectionHash', () => {
  const base = parse(BASE);
  const hash = (text: string, loopId: string) => loopSectionHash(parse(text), loopId);

  test('is a sha256 hex digest, the same for the same config', () => {
    assert.match(loopSectionHash(base, 'room'), /^[0-9a-f]{64}$/);
    assert.equal(loopSectionHash(base, 'room'), hash(BASE, 'room'));
    assert.notEqual(loopSectionHash(base, 'room'), loopSectionHash(base, 'attic'));
  });

  const changes: Array<{ when: string; text: string; room: 'changes' | 'same'; attic: 'changes' | 'same' }> =
    [
      {
        when: "the room's actuator minOnS changes",
        text: edits(BASE, ['gain: 20 }', 'gain: 20, minOnS: 120 }']),
        room: 'changes',
        attic: 'same',
      },
      {
        when: "the room's sensor period changes",
        text: edits(BASE, [
          '{ kind: simulated, plant: room }',
          '{ kind: simulated, plant: room, periodS: 5 }',
        ]),
        room: 'changes',
        attic: 'same',
      },
      {
        when: "the attic's setpoint changes",
        text: edits(BASE, ['setpoint: 10', 'setpoint: 12']),
        room: 'same',
        attic: 'changes',
      },
      {
        when: 'another loop is added',
        text: WITH_GREENHOUSE,
        room: 'same',
        attic: 'same',
      },
      {
        when: 'a default is written out',
        text: edits(BASE, ['{ type: hysteresis }', '{ type: hysteresis, coldTolerance: 0.3 }']),
        room: 'same',
        attic: 'same',
      },
      {
        when: 'YAML keys are reordered',
        text: edits(
          BASE,
          ['{ type: pid, kp: 0.2 }', '{ kp: 0.2, type: pid }'],
          ['    sensor: t_room\n    raise: heater\n', '    raise: heater\n    sensor: t_room\n'],
          [
            '{ kind: simulated_relay, plant: room, gain: 20 }',
            '{ gain: 20, plant: room, kind: simulated_relay }',
          ],
        ),
        room: 'same',
        attic: 'same',
      },
    ];
  for (const { when, text, room, attic } of changes) {
    test(`when ${when}: room ${room}, attic ${attic}`, () => {
      const verdict = (loopId: string) =>
        hash(text, loopId) === loopSectionHash(base, loopId) ? 'same' : 'changes';
      assert.deepEqual({ room: verdict('room'), attic: verdict('attic') }, { room, attic });
    });
  }

  // Hashes stored by the homeostat before bandC/debounceMs were renamed (and before the gpio
  // and mqtt blocks were always resolved): an unchanged loop must keep its hash, or every
  // stored generation would bump on upgrade.
  const PI = `
version: 1
node: { id: pi }
sensors:
  window: { kind: gpio_input, bcm: 27, debounceMs: 50 }
  probe: { kind: ds18b20 }
actuators:
  heater: { kind: gpio_relay, bcm: 17, modulation: band, bandC: 0.4 }
  pump: { kind: gpio_relay, bcm: 18 }
loops:
  room: { sensor: probe, raise: heater, setpoint: 12, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 0.5 } }
  contact: { sensor: window, quantity: generic, raise: pump, setpoint: 0.5, limits: { min: 0, max: 1 }, controller: { type: hysteresis } }
`;
  // A relay that writes neither modulation nor windowS resolved to modulation window in an
  // earlier version and to band since (the default changed), so the loops whose relays leave both out
  // (contact's pump; room's heater in `defaulted`) got one new hash, and one new generation on
  // that upgrade; the others kept theirs (room here, which writes modulation band).
  const STORED = {
    room: '25aef9899d31353bc2b42541c4ad118e72a4ff517ce751a4f7c71efd3e2016e4',
    contact: '77717d1f057b76e55d577415d1f8bd2daa48ab19e7e667b09c545bf57918a25d',
  };
  const STORED_DEFAULTS = {
    room: 'e958dfbb30f44fb4fe08a4f20d4568c8cf4c673f167d205f79c0e050ab8254ef',
    contact: 'c95649d03fe15dee37c55a011153f96ab819c29ce76dc55a4bc941759acaaf8b',
  };
  const renamed = edits(PI, ['debounceMs: 50', 'debounceS: 0.05'], ['bandC: 0.4', 'band: 0.4']);
  const defaulted = edits(PI, [', debounceMs: 50', ''], [', modulation: band, bandC: 0.4', '']);
  const hashCases: Array<{ given: string; text: string; expected: typeof STORED }> = [
    { given: 'the old key names (bandC, debounceMs)', text: PI, expected: STORED },
    { given: 'the new key names (band, debounceS)', text: renamed, expected: STORED },
    { given: 'both keys left at their defaults', text: defaulted, expected: STORED_DEFAULTS },
    {
      given: 'a gpio and an mqtt block written out with their defaults',
      text: `${defaulted}gpio: { sysfsRoot: /sys }\nmqtt: {}\n`,
      expected: STORED_DEFAULTS,
    },
  ];
  for (const { given, text, expected } of hashCases) {
    test(`given ${given}: the hashes stored before the rename`, () => {
      assert.deepEqual({ room: hash(text, 'room'), contact: hash(text, 'contact') }, expected);
    });
  }

  test('throws on an unknown loop id', () => {
    assert.throws(() => loopSectionHash(base, 'nope'), /unknown loop "nope"/);
    assert.throws(() => loopSectionHash(base, 'constructor'), /unknown loop/);
  });
});

describe('canonicalJson', () => {
  test('sorts keys at every level, drops undefined, keeps ±Infinity distinct', () => {
    assert.equal(
      canonicalJson({
        b: 1,
        a: { d: [2, { f: 1, e: 0 }], c: undefined },
        p: { min: -Infinity, max: Infinity },
      }),
      '{"a":{"d":[2,{"e":0,"f":1}]},"b":1,"p":{"max":"Infinity","min":"-Infinity"}}',
    );
  });
});

// ---------------------------------------------------------------------------------------

function parse(text: string): Config {
  const result = parseConfigText(text);
  if (!result.ok) throw new Error(`test config is invalid:\n${result.errors.join('\n')}`);
  return result.config;
}

/** Applies text replacements in order; each must match, so a stale edit fails loudly. */
function edits(text: string, ...replacements: Array<[string | RegExp, string]>): string {
  for (const [from, to] of replacements) {
    const replaced = text.replace(from, to);
    if (replaced === text) throw new Error(`edit did not apply: ${String(from)}`);
    text = replaced;
  }
  return text;
}
