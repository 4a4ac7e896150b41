/**
 * Interlocks (Raspberry Pi issue): a window or door switch, a float switch, pauses a loop.
 * Given/when/then on reconcile with a heater relay loop and a window switch (1 = open).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { trippedInterlock } from '../../src/core/interlock.js';
import { reconcile } from '../../src/core/reconcile.js';
import type { Reading } from '../../src/core/types.js';
import { at, condition, desired, Harness, heaterRelayLoop, min, reading, s } from './fixtures.js';

const WINDOW = { sensorId: 'window', pauseWhen: 1, staleAfterMs: s(30) };
const spec = heaterRelayLoop({ interlocks: [WINDOW] });

describe('trippedInterlock', () => {
  const table: [string, ReturnType<typeof reading> | undefined, boolean][] = [
    ['window closed (0): clear', reading(0, at(0)), false],
    ['window open (1): tripped', reading(1, at(0)), true],
    ['no reading yet: tripped (a broken switch pauses too)', undefined, true],
    ['a reading older than staleAfter: tripped', reading(0, at(-s(31))), true],
    ['NaN: tripped', reading(Number.NaN, at(0)), true],
  ];
  for (const [name, r, tripped] of table) {
    test(name, () => {
      assert.equal(trippedInterlock({ interlocks: [WINDOW] }, { window: r }, at(0)) !== undefined, tripped);
    });
  }
  test('a loop without interlocks is never paused', () => {
    assert.equal(trippedInterlock({}, undefined, at(0)), undefined);
  });
});

describe('trippedInterlock says why, and keeps a quiet contact of a live device in force', () => {
  /** A contact whose device shows it is alive on its availability topic (core/liveness.ts). */
  const VIA = 'availability zigbee2mqtt/window/availability';
  const HOUR = min(60);
  const live = (value: number, atMs: number, seenAtMs: number, extra: Partial<Reading> = {}): Reading => ({
    value,
    atMs,
    liveness: { via: VIA, seenAtMs, maxQuietMs: 25 * HOUR },
    ...extra,
  });
  const table: [string, Reading | undefined, string | undefined][] = [
    ['given no reading yet, then tripped: Missing', undefined, 'Missing: interlock window: no reading yet'],
    [
      'given a closed window 31 s old without liveness, then tripped: Stale with the age',
      reading(0, at(-s(31))),
      'Stale: interlock window: last reading is 31 s old (limit 30 s)',
    ],
    [
      'given a read failure after an old reading, then the failure is said too',
      { ...reading(0, at(-s(31))), lastError: 'EIO' },
      'Stale: interlock window: last reading is 31 s old (limit 30 s); last read failed: EIO',
    ],
    [
      'given a reading stamped 5 s ahead (the clock went back), then tripped: Stale',
      reading(0, at(s(5))),
      'Stale: interlock window: last reading is stamped 5 s in the future',
    ],
    [
      'given garbage the driver described, then tripped: NotFinite with what was sent',
      {
        ...reading(Number.NaN, at(0)),
        whyNotANumber: 'payload "banana" is neither on (true) nor off (false)',
      },
      'NotFinite: interlock window: payload "banana" is neither on (true) nor off (false)',
    ],
    [
      'given NaN without a reason, then tripped: NotFinite',
      reading(Number.NaN, at(0)),
      'NotFinite: interlock window: reads NaN, not a number',
    ],
    [
      'given a closed window 10 h old whose device is online now, then clear (a quiet contact stays in force)',
      live(0, at(-10 * HOUR), at(0)),
      undefined,
    ],
    [
      'given an open window 10 h old whose device is online now, then tripped: it reads 1',
      live(1, at(-10 * HOUR), at(0)),
      'Reads: interlock window reads 1',
    ],
    [
      'given a closed window past maxQuiet though the device is online, then tripped: Stale',
      live(0, at(-26 * HOUR), at(0)),
      'Stale: interlock window: quiet for 1560 min though the device is alive (limit 1500 min): no new value',
    ],
    [
      'given a closed window 10 h old whose device was last seen 1 h ago, then tripped: Stale',
      live(0, at(-10 * HOUR), at(-HOUR)),
      `Stale: interlock window: last reading is 36000 s old (limit 30 s); device seen 60 min ago (${VIA})`,
    ],
    [
      'given a closed window whose device went offline 5 s ago, then tripped: Offline (before its value counts)',
      live(0, at(-s(1)), at(-s(5)), {
        liveness: { via: VIA, offlineSinceMs: at(-s(5)), maxQuietMs: 25 * HOUR },
      }),
      `Offline: interlock window: device offline for 5 s (${VIA})`,
    ],
    [
      'given an offline device whose driver also made the value NaN, then Offline is what is said',
      live(Number.NaN, at(-s(1)), at(-s(5)), {
        liveness: { via: VIA, offlineSinceMs: at(-s(5)), maxQuietMs: 25 * HOUR },
        whyNotANumber: `device offline (${VIA})`,
      }),
      `Offline: interlock window: device offline for 5 s (${VIA})`,
    ],
  ];
  for (const [name, given, expected] of table) {
    test(name, () => {
      const tripped = trippedInterlock({ interlocks: [WINDOW] }, { window: given }, at(0));
      assert.equal(tripped === undefined ? undefined : `${tripped.reason}: ${tripped.message}`, expected);
    });
  }
});

describe('reconcile with an interlock', () => {
  test('given a cold room with the heater on, when the window opens, then the heater is off at once and Interlocked=True', () => {
    const h = new Harness(spec, desired('heat', 20));
    const observe = (windowValue: number, atMs: number) =>
      reconcile(
        h.spec,
        h.want,
        {
          reading: reading(15, atMs),
          actuators: h.actuators,
          interlocks: { window: reading(windowValue, atMs) },
        },
        h.memory,
        atMs,
      );
    let result = observe(0, at(0));
    h.memory = result.memory;
    h.actuators = { ...h.actuators, ...result.wanted };
    assert.equal(result.wanted.heater, 1, 'heating with the window closed');
    assert.equal(condition(result, 'Interlocked').status, 'False');

    result = observe(1, at(s(10)));
    h.memory = result.memory;
    h.actuators = { ...h.actuators, ...result.wanted };
    assert.equal(result.wanted.heater, 0);
    assert.deepEqual(
      result.commands.map((c) => [c.actuatorId, c.level, c.reason, c.detail]),
      [['heater', 0, 'safe-state', 'interlock window reads 1']],
    );
    assert.equal(condition(result, 'Interlocked').status, 'True');
    assert.equal(condition(result, 'Faulted').status, 'False', 'an open window is not a fault');
    assert.equal(result.status.action, 'idle');

    // When the window closes again, regulation resumes.
    result = observe(0, at(min(2)));
    assert.equal(result.wanted.heater, 1);
    assert.equal(condition(result, 'Interlocked').status, 'False');
  });

  test('loops without interlocks carry no Interlocked condition', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', 20));
    const result = h.cycle(at(0), 15);
    assert.equal(
      result.status.conditions.some((c) => c.type === 'Interlocked'),
      false,
    );
  });
});
