/**
 * driveSafe: every path that drives actuators to their safe state outside a cycle (stop,
 * finalizer, reload). Fake drivers record what they were asked; one hangs, one fails.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeSafeOutcome, driveSafe, type SafeStateEvent } from '../../src/runtime/drive-safe.js';
import { recordingLogger } from '../support/logger.js';

/** A driver that records every write; `failWith` makes writes reject, `hold` makes them wait. */
class RecordingDriver {
  writes: number[] = [];
  level: number | undefined;
  failWith: string | undefined;
  hold: Promise<void> | undefined;
  async write(level: number): Promise<void> {
    this.writes.push(level);
    if (this.hold) await this.hold;
    if (this.failWith !== undefined) throw new Error(this.failWith);
    this.level = level;
  }
}

/** Lets every pending promise callback run (a write that does not hang has settled after it). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('driveSafe: given drivers that all answer', () => {
  test('when driven safe, then each gets its own safe level once, one info line each, one event in all', async () => {
    const heater = new RecordingDriver();
    const vent = new RecordingDriver();
    const { logger, records } = recordingLogger({ level: 'debug' });
    const events: SafeStateEvent[] = [];
    const outcome = await driveSafe(
      [
        { id: 'heater', safeLevel: 0, driver: heater },
        { id: 'vent', safeLevel: 1, driver: vent },
      ],
      {
        reason: 'loop room removed',
        logger: logger.child({ loop: 'room' }), // a loop's actuators: the loop's logger
        loop: 'room',
        recordEvent: (event) => events.push(event),
        eventKind: 'loop-removed-safe',
        eventSource: 'file',
      },
    );
    assert.deepEqual(heater.writes, [0]);
    assert.deepEqual(vent.writes, [1], 'a safe level of 1 (a vent that fails open) is written as is');
    assert.deepEqual(outcome, { reason: 'loop room removed', safe: ['heater', 'vent'], failed: [] });
    assert.deepEqual(
      records.map((r) => [r.level, r.msg, r.actuator, r.loop]),
      [
        [30, 'heater → safe state (loop room removed)', 'heater', 'room'],
        [30, 'vent → safe state (loop room removed)', 'vent', 'room'],
      ],
    );
    assert.deepEqual(events, [
      {
        kind: 'loop-removed-safe',
        source: 'file',
        loop: 'room',
        message: 'loop room removed: heater, vent at their safe state',
        data: { reason: 'loop room removed', safe: ['heater', 'vent'], failed: [] },
      },
    ]);
  });

  test('when no targets are given, then nothing is written and the event says so', async () => {
    const { logger, records } = recordingLogger({ level: 'debug' });
    const events: SafeStateEvent[] = [];
    const outcome = await driveSafe([], { reason: 'SIGTERM', logger, recordEvent: (e) => events.push(e) });
    assert.deepEqual(outcome, { reason: 'SIGTERM', safe: [], failed: [] });
    assert.deepEqual(records, []);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.kind, 'actuators-safe', 'the default kind');
    assert.equal(events[0]?.message, 'SIGTERM: no actuators');
  });
});

describe('driveSafe: given a device that hangs', () => {
  test('when driven safe, then the others are written at once, and the call resolves once it answers', async () => {
    const plug = new RecordingDriver();
    const gpio = new RecordingDriver();
    let release!: () => void;
    plug.hold = new Promise((resolve) => {
      release = resolve;
    });
    const { logger } = recordingLogger({ level: 'debug' });
    let done = false;
    const running = driveSafe(
      [
        { id: 'plug', safeLevel: 0, driver: plug },
        { id: 'gpio', safeLevel: 0, driver: gpio },
      ],
      { reason: 'shutdown', logger },
    ).then((outcome) => {
      done = true;
      return outcome;
    });
    await settle();
    assert.deepEqual(plug.writes, [0], 'the hanging write was issued');
    assert.equal(gpio.level, 0, 'the GPIO heater is off while the plug write still hangs');
    assert.equal(done, false, 'the call waits for the hanging device');
    release();
    assert.deepEqual((await running).safe, ['plug', 'gpio']);
  });
});

describe('driveSafe: given a device that fails and one without a driver', () => {
  test('when driven safe, then it never throws, each failure is one error line, and the rest is safe', async () => {
    const broken = new RecordingDriver();
    broken.failWith = 'broker unreachable';
    const heater = new RecordingDriver();
    const { logger, records } = recordingLogger({ level: 'debug' });
    const events: SafeStateEvent[] = [];
    const outcome = await driveSafe(
      [
        { id: 'plug', safeLevel: 0, driver: broken },
        { id: 'ghost', safeLevel: 0, driver: undefined },
        { id: 'heater', safeLevel: 0, driver: heater },
      ],
      { reason: 'reload', logger, recordEvent: (e) => events.push(e) },
    );
    assert.equal(heater.level, 0);
    assert.deepEqual(outcome.safe, ['heater']);
    assert.deepEqual(outcome.failed, [
      { id: 'plug', error: 'broker unreachable' },
      { id: 'ghost', error: 'no driver for actuator "ghost"' },
    ]);
    // In the order the writes settled: sorted here.
    const errors = records.filter((r) => r.level === 50).map((r) => r.msg);
    assert.deepEqual(errors.sort(), [
      'ghost: not confirmed safe (reload): no driver for actuator "ghost"',
      'plug: not confirmed safe (reload): broker unreachable',
    ]);
    assert.equal(events.length, 1, 'one event for the whole call');
    assert.equal(
      events[0]?.message,
      'reload: heater at their safe state; plug not confirmed safe (broker unreachable); ghost not confirmed safe (no driver for actuator "ghost")',
    );
  });

  test('when recording the event fails, then the outcome is still returned and a warning logged', async () => {
    const heater = new RecordingDriver();
    const { logger, records } = recordingLogger({ level: 'debug' });
    const outcome = await driveSafe([{ id: 'heater', safeLevel: 0, driver: heater }], {
      reason: 'SIGTERM',
      logger,
      recordEvent: () => {
        throw new Error('disk full');
      },
    });
    assert.deepEqual(outcome.safe, ['heater']);
    assert.ok(records.some((r) => r.level === 40 && /event could not be recorded/.test(r.msg)));
  });
});

describe('describeSafeOutcome', () => {
  test('names what is safe and what is not, with why', () => {
    assert.equal(
      describeSafeOutcome({ reason: 'x', safe: ['a'], failed: [{ id: 'b', error: 'timeout' }] }),
      'x: a at their safe state; b not confirmed safe (timeout)',
    );
  });
});

describe('driveSafe: given a loop-bound logger', () => {
  test('when driven safe, then each line names the loop once (no duplicate JSON key)', async () => {
    const { logger, text } = recordingLogger({ level: 'debug' });
    await driveSafe([{ id: 'heater', safeLevel: 0, driver: new RecordingDriver() }], {
      reason: 'SIGTERM',
      logger: logger.child({ loop: 'room' }),
      loop: 'room',
    });
    const line = text().trim();
    assert.equal(line.match(/"loop":/g)?.length, 1, line);
  });
});
