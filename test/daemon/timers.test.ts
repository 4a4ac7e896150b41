import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { DaemonTimers } from '../../src/daemon/timers.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { silentLogger } from '../support/logger.js';
import { memoryStore } from '../support/store.js';

/**
 * Counts turns of the event loop: a setImmediate chain, so lines written in one synchronous
 * burst share a turn number and lines written a turn later do not.
 */
function turnCounter() {
  const counter = { turn: 0, running: true };
  const tick = () => {
    counter.turn++;
    if (counter.running) setImmediate(tick);
  };
  setImmediate(tick);
  return counter;
}

/** A loop's status as the status line reads it. */
function status(loop: string): LoopStatus {
  return {
    loop,
    measured: 20,
    setpoint: 20,
    mode: 'heat',
    output: 0.5,
    action: 'heating',
    conditions: [],
  } as unknown as LoopStatus;
}

function timersFor(loops: number, clock: ManualClock, afterLine: (written: number) => void = () => {}) {
  const counter = turnCounter();
  /** The turn each status line was written in. */
  const lineTurns: number[] = [];
  const logger = Object.create(silentLogger, {
    info: {
      value: (_fields: unknown, msg: string) => {
        if (!msg.startsWith('loop')) return;
        lineTurns.push(counter.turn);
        afterLine(lineTurns.length);
      },
    },
  });
  const timers = new DaemonTimers({
    clock,
    logger,
    store: memoryStore(clock),
    flushEveryMs: () => 600_000,
    statusEveryMs: 60_000,
    statusLines: () => Array.from({ length: loops }, (_, i) => ({ status: status(`loop${i}`), unit: '°C' })),
  });
  /** How many lines each turn wrote, in order. */
  const linesPerTurn = () => {
    counter.running = false;
    return [...new Set(lineTurns)].map((turn) => lineTurns.filter((t) => t === turn).length);
  };
  return { timers, linesPerTurn };
}

describe('DaemonTimers: the periodic status lines are written a slice per turn of the event loop', () => {
  test('given 25 loops, when the status tick fires, then 10 lines are written per turn until all 25 are', async () => {
    const clock = new ManualClock(0);
    const { timers, linesPerTurn } = timersFor(25, clock);
    timers.start();
    await clock.advance(60_000);
    timers.stop();
    assert.deepEqual(linesPerTurn(), [10, 10, 5]);
  });

  test('given a stop in the middle of the slices, then no further line is written', async () => {
    const clock = new ManualClock(0);
    const { timers, linesPerTurn } = timersFor(25, clock, (written) => {
      if (written === 10) timers.stop(); // a SIGTERM while the first slice is written
    });
    timers.start();
    await clock.advance(60_000);
    assert.deepEqual(linesPerTurn(), [10]);
  });
});

describe('DaemonTimers: the periodic flush encodes a slice per turn, then writes once', () => {
  /** Timers on an in-memory store whose flushes and encodings are recorded (with their turn). */
  function flushingTimers(clock: ManualClock, loops: number) {
    const counter = turnCounter();
    const store = memoryStore(clock);
    const calls: string[] = [];
    const encodeSome = store.state.encodeSome.bind(store.state);
    const flush = store.state.flush.bind(store.state);
    let failEncoding = false;
    store.state.encodeSome = (max: number) => {
      calls.push(`encode@${counter.turn}`);
      if (failEncoding) throw new Error('encoder defect');
      return encodeSome(max);
    };
    store.state.flush = () => {
      calls.push(`flush@${counter.turn}`);
      return flush();
    };
    for (let i = 0; i < loops; i++) {
      store.state.saveState(`loop${i}`, { cycles: i }, status(`loop${i}`), clock.nowMs());
    }
    const timers = new DaemonTimers({
      clock,
      logger: silentLogger,
      store,
      flushEveryMs: () => 600_000,
      statusEveryMs: 0,
      statusLines: () => [],
    });
    const done = () => {
      counter.running = false;
      timers.stop();
    };
    return { timers, calls, store, done, failEncodingFromNowOn: () => (failEncoding = true) };
  }

  test('given 45 pending loop states, when the flush tick fires, then they are encoded 20 per turn and written in one flush', async () => {
    const clock = new ManualClock(0);
    const { timers, calls, store, done } = flushingTimers(clock, 45);
    timers.start();
    await clock.advance(600_000);
    done();
    const turns = calls.map((call) => Number(call.split('@')[1]));
    assert.deepEqual(
      calls.map((call) => call.split('@')[0]),
      ['encode', 'encode', 'encode', 'flush'],
    );
    assert.equal(new Set(turns.slice(0, 3)).size, 3, 'each slice in its own turn');
    assert.equal(turns[3], turns[2], 'the write follows the last slice in its turn');
    assert.equal(store.state.dirty, false, 'everything written');
  });

  test('given an encoder that throws, then the flush still runs and the next tick comes', async () => {
    const clock = new ManualClock(0);
    const { timers, calls, done, failEncodingFromNowOn } = flushingTimers(clock, 5);
    failEncodingFromNowOn();
    timers.start();
    await clock.advance(600_000);
    await clock.advance(600_000);
    done();
    assert.deepEqual(
      calls.map((call) => call.split('@')[0]),
      ['encode', 'flush', 'encode', 'flush'],
    );
  });
});
