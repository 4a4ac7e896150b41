/**
 * LoopCycle's fault paths: a write that fails, a fault reset during a cycle, a defect in
 * reconcile. Fake actuators record what they were asked; the clock is moved by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { Mode } from '../../src/core/types.js';
import type { ActuatorDriver } from '../../src/drivers/types.js';
import { LoopCycle } from '../../src/runtime/loop-cycle.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { at, min, relay, s, splitRangeLoop, T0 } from '../core/fixtures.js';

/** A relay that records writes; `failing` makes every write reject; `hold` makes writes wait. */
class FakeRelay implements ActuatorDriver {
  readonly simulated = true;
  readonly kind = 'relay' as const;
  level = 0;
  writes: number[] = [];
  failing = false;
  hold: Promise<void> | undefined;
  constructor(readonly id: string) {}
  async observe() {
    return this.failing ? undefined : this.level;
  }
  async write(level: number) {
    this.writes.push(level);
    if (this.hold) await this.hold;
    if (this.failing) throw new Error(`${this.id} unreachable`);
    this.level = level;
  }
}

function cycleFor(
  spec: LoopSpec,
  value: () => number,
  clock: ManualClock,
  drivers: FakeRelay[],
  mode: () => Mode = () => 'heat_cool',
) {
  return new LoopCycle({
    spec,
    desired: () => ({ generation: 1, setpoint: 20, mode: mode() }),
    latestReading: () => ({ value: value(), atMs: clock.nowMs() }),
    actuators: new Map(drivers.map((d) => [d.id, d])),
    clock,
    logger: pino({ level: 'silent' }),
  });
}

describe('LoopCycle: given an actuator that cannot be written', () => {
  test('when the cooler is unreachable, then the heater is still commanded every cycle and the cycle does not throw', async () => {
    const clock = new ManualClock(T0);
    const heater = new FakeRelay('heater');
    const compressor = new FakeRelay('compressor');
    compressor.failing = true;
    const spec = splitRangeLoop({ lower: relay('compressor'), changeoverMs: 0, deadband: 0 });
    let tempC = 15;
    const cycle = cycleFor(spec, () => tempC, clock, [heater, compressor]);
    // Its state is unknown, so the compressor is commanded off, and that write fails.
    const first = await cycle.run();
    assert.equal(heater.level, 1, 'cold: the heater is on although the compressor is unreachable');
    assert.ok(first.nextWakeMs !== undefined, 'the cycle completed and scheduled its next wake-up');
    // Warm now: the heater must go off although the compressor write keeps failing.
    tempC = 25;
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(heater.level, 0, 'the heater went off in the same cycle');
    const reconciled = cycle.status?.conditions.find((c) => c.type === 'Reconciled');
    assert.equal(reconciled?.status, 'False');
    assert.match(reconciled?.message ?? '', /compressor unreachable/);
  });

  test('when a write fails in the cycle that latches a fault, then the latch is kept (memory is committed)', async () => {
    const clock = new ManualClock(T0);
    const heater = new FakeRelay('heater');
    const compressor = new FakeRelay('compressor');
    compressor.failing = true;
    const spec = splitRangeLoop({
      lower: relay('compressor'),
      changeoverMs: 0,
      deadband: 0,
      cutoff: { max: 30 },
    });
    let tempC = 15;
    const cycle = cycleFor(spec, () => tempC, clock, [heater, compressor]);
    await cycle.run();
    assert.equal(heater.level, 1);
    tempC = 31; // above the cut-off with the heater on: latch
    await clock.advance(at(s(10)) - clock.nowMs());
    await cycle.run();
    assert.equal(heater.level, 0);
    assert.ok(cycle.loopMemory.latchedFault, 'latched and kept although the compressor write failed');
    tempC = 15; // cold again: the latch holds the heater off
    await clock.advance(at(min(5)) - clock.nowMs());
    await cycle.run();
    assert.equal(heater.level, 0, 'still off: the latch was not lost');
  });
});

describe('LoopCycle: given a device that hangs on a write', () => {
  test('when the loop is switched off, then the fan goes off at once, not after the hanging heater-plug write', async () => {
    const clock = new ManualClock(T0);
    // The raise actuator (commanded first) is a plug; the lower one a GPIO fan.
    const plug = new FakeRelay('plug_heater');
    const fan = new FakeRelay('fan');
    const spec = splitRangeLoop({
      raise: relay('plug_heater'),
      lower: relay('fan'),
      changeoverMs: 0,
      deadband: 0,
    });
    let mode: Mode = 'heat_cool';
    const cycle = cycleFor(
      spec,
      () => 25,
      clock,
      [plug, fan],
      () => mode,
    );
    await cycle.run();
    assert.equal(fan.level, 1, 'too warm: the fan runs');
    // The plug went quiet (state unknown: commanded to its safe level again) and its write
    // hangs, as a publish waiting for a broker does …
    plug.failing = true;
    let release!: () => void;
    plug.hold = new Promise((resolve) => {
      release = resolve;
    });
    mode = 'off';
    await clock.advance(at(s(30)) - clock.nowMs());
    const running = cycle.run();
    await new Promise((resolve) => setImmediate(resolve));
    // … while the fan's way to its safe level does not wait for it.
    assert.equal(fan.level, 0, 'the fan is off while the plug write still hangs');
    release();
    await running;
  });
});

describe('LoopCycle: given a fault reset while a cycle is writing', () => {
  test('when the cycle commits, then the reset is not undone', async () => {
    const clock = new ManualClock(T0);
    const heater = new FakeRelay('heater');
    const compressor = new FakeRelay('compressor');
    const spec = splitRangeLoop({
      lower: relay('compressor'),
      changeoverMs: 0,
      deadband: 0,
      cutoff: { max: 30 },
    });
    let tempC = 15;
    const cycle = cycleFor(spec, () => tempC, clock, [heater, compressor]);
    await cycle.run();
    tempC = 31;
    await clock.advance(at(s(10)) - clock.nowMs());
    await cycle.run();
    assert.ok(cycle.loopMemory.latchedFault, 'latched');
    // A cycle starts and waits on a slow write (the compressor goes on: it is hot) …
    let release!: () => void;
    compressor.hold = new Promise((resolve) => {
      release = resolve;
    });
    await clock.advance(at(s(20)) - clock.nowMs());
    const running = cycle.run();
    // … a person resets the fault meanwhile …
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(cycle.resetFault(clock.nowMs()), true);
    release();
    await running;
    assert.equal(
      cycle.loopMemory.latchedFault,
      undefined,
      'the reset survives the commit of the running cycle',
    );
  });
});

describe('LoopCycle: given a defect in reconcile', () => {
  test('when reconcile throws, then every actuator is driven safe and the cycle fails', async () => {
    const clock = new ManualClock(T0);
    const heater = new FakeRelay('heater');
    const compressor = new FakeRelay('compressor');
    const spec = splitRangeLoop({ lower: relay('compressor'), changeoverMs: 0, deadband: 0 });
    let tempC = 15;
    const cycle = cycleFor(spec, () => tempC, clock, [heater, compressor]);
    await cycle.run();
    assert.equal(heater.level, 1);
    // No controller at all: a stand-in for any defect that makes the core throw.
    cycle.updateSpec({ ...spec, controller: null as unknown as LoopSpec['controller'] });
    tempC = 16;
    await clock.advance(at(s(10)) - clock.nowMs());
    await assert.rejects(cycle.run());
    assert.equal(heater.level, 0, 'the heater is not left on');
    assert.equal(compressor.level, 0);
  });
});
