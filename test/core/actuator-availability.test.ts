/**
 * What an actuator's own availability (its LWT or availability topic) makes of the
 * ActuatorConfirmed condition, and when an unconfirmed command is sent again, as tables:
 * given the availability, the wanted and observed levels and the command memory, then the
 * exact status, reason and message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  actuatorConfirmedValue,
  type ConfirmationInputs,
  type DeviceAvailability,
  retryDueOnReturn,
} from '../../src/core/actuator-availability.js';
import { type CommandMemory, decideCommand, retryDelayMs } from '../../src/core/command.js';
import type { ActuatorSpec } from '../../src/core/loop-spec.js';
import { at, heaterRelayLoop, min, relay, s, splitRangeLoop, T0 } from './fixtures.js';

const ONLINE: DeviceAvailability = { state: 'online', sinceMs: at(0), topic: 'plug/online' };
/** T0 is 06:00 UTC: the message prints "since 06:00 UTC". */
const OFFLINE: DeviceAvailability = { state: 'offline', sinceMs: at(0), topic: 'plug/online' };
const UNKNOWN: DeviceAvailability = { state: 'unknown', topic: 'plug/online' };

/** A command sent `attempts` times and not (yet) confirmed. */
function unanswered(level: number, attempts: number): CommandMemory {
  return { level, atMs: at(s(30)), attempts, confirmed: false };
}

const CONFIRMED = { status: 'True', reason: 'Confirmed', message: 'every actuator is at its wanted level' };
const PENDING = {
  status: 'False',
  reason: 'Pending',
  message: 'an actuator is not (yet) at its wanted level',
};

describe('ActuatorConfirmed of a heater on an MQTT plug', () => {
  type Row = {
    name: string;
    availability?: DeviceAvailability;
    wanted: number;
    observed: 0 | 1 | undefined;
    commands?: CommandMemory;
    allConfirmed: boolean;
    expected: { status: string; reason: string; message: string };
  };
  const rows: Row[] = [
    {
      name: 'online and at its level',
      availability: ONLINE,
      wanted: 1,
      observed: 1,
      allConfirmed: true,
      expected: CONFIRMED,
    },
    {
      name: 'offline while it should be off: not confirmed off, since when',
      availability: OFFLINE,
      wanted: 0,
      observed: undefined,
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'DeviceOffline',
        message: 'heater is not confirmed off: device offline since 06:00 UTC',
      },
    },
    {
      name: 'offline while it should be on: the topic it said so on',
      availability: OFFLINE,
      wanted: 1,
      observed: undefined,
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'DeviceOffline',
        message: 'heater: device offline since 06:00 UTC (plug/online)',
      },
    },
    {
      name: 'offline, whatever its last state said (the core was told it is at its level)',
      availability: OFFLINE,
      wanted: 0,
      observed: 0,
      allConfirmed: true,
      expected: {
        status: 'False',
        reason: 'DeviceOffline',
        message: 'heater is not confirmed off: device offline since 06:00 UTC',
      },
    },
    {
      name: 'offline with no time known',
      availability: { state: 'offline', topic: 'plug/online' },
      wanted: 0,
      observed: undefined,
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'DeviceOffline',
        message: 'heater is not confirmed off: device offline',
      },
    },
    {
      name: 'unknown, OFF sent once: a command on its way',
      availability: UNKNOWN,
      wanted: 0,
      observed: undefined,
      commands: unanswered(0, 1),
      allConfirmed: false,
      expected: PENDING,
    },
    {
      name: 'unknown, OFF and a retry unanswered',
      availability: UNKNOWN,
      wanted: 0,
      observed: undefined,
      commands: unanswered(0, 2),
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'NotConfirmedOff',
        message: 'heater is not confirmed off: no state from the device after the command and a retry',
      },
    },
    {
      name: 'unknown because the availability topic spoke garbage, OFF unanswered',
      availability: { state: 'unknown', topic: 'plug/online', garbage: '"kaput"' },
      wanted: 0,
      observed: undefined,
      commands: unanswered(0, 3),
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'NotConfirmedOff',
        message:
          'heater is not confirmed off: no state from the device, and its availability topic plug/online said "kaput"',
      },
    },
    {
      name: 'no availability topic (a plug without LWT), OFF unanswered',
      wanted: 0,
      observed: undefined,
      commands: unanswered(0, 2),
      allConfirmed: false,
      expected: {
        status: 'False',
        reason: 'NotConfirmedOff',
        message: 'heater is not confirmed off: no state from the device after the command and a retry',
      },
    },
    {
      name: 'online, ON unanswered many times: pending, not a problem of being off',
      availability: ONLINE,
      wanted: 1,
      observed: 0,
      commands: unanswered(1, 5),
      allConfirmed: false,
      expected: PENDING,
    },
    {
      name: 'online, OFF confirmed after retries',
      availability: ONLINE,
      wanted: 0,
      observed: 0,
      commands: { level: 0, atMs: at(s(30)), attempts: 3, confirmed: true },
      allConfirmed: true,
      expected: CONFIRMED,
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const inputs: ConfirmationInputs = {
        spec: heaterRelayLoop(),
        allConfirmed: row.allConfirmed,
        levels: { heater: row.wanted },
        observed: { heater: row.observed },
        availability: row.availability ? { heater: row.availability } : undefined,
        commands: row.commands ? { heater: row.commands } : undefined,
      };
      assert.deepEqual(actuatorConfirmedValue(inputs), row.expected);
    });
  }
});

describe('ActuatorConfirmed names every actuator', () => {
  test('given a heater offline and a compressor not confirmed off, then DeviceOffline names both, offline first', () => {
    const value = actuatorConfirmedValue({
      spec: splitRangeLoop(),
      allConfirmed: false,
      levels: { heater: 0, compressor: 0 },
      observed: { heater: undefined, compressor: undefined },
      availability: {
        heater: OFFLINE,
        compressor: { state: 'online', sinceMs: at(0), topic: 'tele/compressor/LWT' },
      },
      commands: { compressor: unanswered(0, 2) },
    });
    assert.deepEqual(value, {
      status: 'False',
      reason: 'DeviceOffline',
      message:
        'heater is not confirmed off: device offline since 06:00 UTC; ' +
        'compressor is not confirmed off: no state from the device after the command and a retry',
    });
  });

  test('given a valve whose safe level is 30 %, offline while held there, then the message says so', () => {
    const valve: ActuatorSpec = { id: 'valve', kind: 'continuous', safeLevel: 0.3 };
    const value = actuatorConfirmedValue({
      spec: heaterRelayLoop({ raise: valve }),
      allConfirmed: false,
      levels: { valve: 0.3 },
      observed: { valve: undefined },
      availability: { valve: { ...OFFLINE, sinceMs: T0 + min(63) } },
    });
    assert.deepEqual(value, {
      status: 'False',
      reason: 'DeviceOffline',
      message: 'valve is not confirmed at its safe level 30 %: device offline since 07:03 UTC',
    });
  });

  test('given two relays, both online and at their levels, then True', () => {
    const value = actuatorConfirmedValue({
      spec: heaterRelayLoop({ raise: relay('heater'), lower: relay('fan') }),
      allConfirmed: true,
      levels: { heater: 0, fan: 1 },
      observed: { heater: 0, fan: 1 },
      availability: { heater: ONLINE, fan: ONLINE },
    });
    assert.deepEqual(value, CONFIRMED);
  });
});

describe('retryDueOnReturn: a command left unanswered while the device was away', () => {
  const timing = { keepAliveMs: min(10), retryInitialMs: s(10) };
  const sent = unanswered(0, 4); // sent at T0 + 30 s; its backoff is 80 s
  const back = (sinceMs: number): DeviceAvailability => ({ state: 'online', sinceMs, topic: 'plug/online' });

  const unchanged: [string, CommandMemory | undefined, DeviceAvailability | undefined][] = [
    ['no command yet', undefined, back(at(s(60)))],
    ['the command was confirmed', { ...sent, confirmed: true }, back(at(s(60)))],
    ['the device is still offline', sent, { ...OFFLINE, sinceMs: at(s(60)) }],
    ['the availability is unknown', sent, UNKNOWN],
    ['no availability topic', sent, undefined],
    ['online since before the send (it did not answer while present)', sent, back(at(s(30)))],
    ['online with no time known', sent, { state: 'online', topic: 'plug/online' }],
  ];
  for (const [name, last, availability] of unchanged) {
    test(`${name}: unchanged`, () => assert.equal(retryDueOnReturn(last, availability, timing), last));
  }

  test('back online after the send: the retry falls due exactly when it came back', () => {
    const returnedMs = at(s(45));
    const due = retryDueOnReturn(sent, back(returnedMs), timing);
    assert.deepEqual(due, { ...sent, atMs: returnedMs - retryDelayMs(sent.attempts, timing) });
    // Then decideCommand re-sends at that instant, not 80 s after the last send.
    const why = { reason: 'safe-state', detail: 'test' } as const;
    const decision = decideCommand('heater', 0, undefined, due, returnedMs, timing, why);
    assert.equal(decision.command?.reason, 'retry');
    assert.equal(decision.memory.attempts, 5);
    const withoutReturn = decideCommand('heater', 0, undefined, sent, returnedMs, timing, why);
    assert.equal(withoutReturn.command, undefined, 'without the return the backoff would still run');
  });
});
