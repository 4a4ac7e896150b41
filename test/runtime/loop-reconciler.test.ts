/**
 * LoopReconciler's fault paths: a write that fails, a fault reset during a cycle, a defect in
 * reconcile. Fake actuators record what they were asked; the clock is moved by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { applyStoredFaultReset } from '../../src/core/fault-reset.js';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { initialLoopMemory, type LoopMemory } from '../../src/core/loop-state.js';
import type { Mode } from '../../src/core/types.js';
import type { ActuatorDriver } from '../../src/drivers/types.js';
import { type CycleDesired, LoopReconciler } from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';

const HOUR_MS = 3_600_000;

import { at, min, relay, s, splitRangeLoop, T0 } from '../core/fixtures.js';

/** A relay that records writes; `failing` makes every write reject; `holdWrites` makes writes wait. */
class FakeRelay implements ActuatorDriver {
  readonly simulated = true;
  readonly kind = 'relay' as const;
  level = 0;
  writes: number[] = [];
  failing = false;
  hold: Promise<void> | undefined;
  constructor(readonly id: string) {}
  /** From now on every write waits (a device that hangs) until the function returned is called. */
  holdWrites(): () => void {
    let release!: () => void;
    this.hold = new Promise((resolve) => {
      release = resolve;
    });
    return release;
  }
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

/**
 * The loop's reconciler on fake relays: reading `value()` stamped now, desired state `desired()`
 * (default generation 1, 20 °C, heat_cool), starting from `memory` if given.
 */
function cycleFor(
  spec: LoopSpec,
  value: () => number,
  clock: ManualClock,
  drivers: FakeRelay[],
  desired: () => CycleDesired = () => ({ generation: 1, setpoint: 20, mode: 'heat_cool' }),
  memory?: LoopMemory,
) {
  return new LoopReconciler({
    spec,
    desired,
    latestReading: () => ({ value: value(), atMs: clock.nowMs() }),
    actuators: new Map(drivers.map((d) => [d.id, d])),
    clock,
    logger: pino({ level: 'silent' }),
    ...(memory ? { memory } : {}),
  });
}

describe('LoopReconciler: given an actuator that cannot be written', () => {
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

describe('LoopReconciler: given a device that hangs on a write', () => {
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
      () => ({ generation: 1, setpoint: 20, mode }),
    );
    await cycle.run();
    assert.equal(fan.level, 1, 'too warm: the fan runs');
    // The plug went quiet (state unknown: commanded to its safe level again) and its write
    // hangs, as a publish waiting for a broker does …
    plug.failing = true;
    const release = plug.holdWrites();
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

describe('LoopReconciler: given a fault reset while a cycle is writing', () => {
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
    // Desired state as the store holds it: a person's reset is committed there (with its
    // generation), not written into the loop's memory.
    let desired: CycleDesired = { generation: 1, setpoint: 20, mode: 'heat_cool' };
    const cycle = cycleFor(
      spec,
      () => tempC,
      clock,
      [heater, compressor],
      () => desired,
    );
    await cycle.run();
    tempC = 31;
    await clock.advance(at(s(10)) - clock.nowMs());
    await cycle.run();
    assert.ok(cycle.loopMemory.latchedFault, 'latched');
    // A cycle starts and waits on a slow write (the compressor goes on: it is hot) …
    const release = compressor.holdWrites();
    await clock.advance(at(s(20)) - clock.nowMs());
    const running = cycle.run();
    // … a person resets the fault meanwhile (stored; the daemon then triggers a cycle) …
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(cycle.latchedFaultAt(clock.nowMs()), 'there is a fault to reset');
    desired = { ...desired, generation: 2, faultReset: { atMs: clock.nowMs(), generation: 2 } };
    release();
    await running;
    await cycle.run();
    assert.equal(
      cycle.loopMemory.latchedFault,
      undefined,
      'the reset survives the commit of the running cycle',
    );
  });
});

describe('LoopReconciler: given a defect in reconcile', () => {
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

describe('LoopReconciler: given a fault reset stored as desired state', () => {
  type Reset = { atMs: number; generation: number } | undefined;
  const spec = () =>
    splitRangeLoop({ lower: relay('compressor'), changeoverMs: 0, deadband: 0, cutoff: { max: 30 } });

  /** A cycle on fresh fake relays; `desired.reset` and `desired.generation` are the test's. */
  function cycleWith(
    clock: ManualClock,
    desired: { reset: Reset; generation: number },
    temp: { c: number },
    memory?: LoopMemory,
  ) {
    const heater = new FakeRelay('heater');
    const compressor = new FakeRelay('compressor');
    const cycle = cycleFor(
      spec(),
      () => temp.c,
      clock,
      [heater, compressor],
      () => ({
        generation: desired.generation,
        setpoint: 20,
        mode: 'heat_cool',
        ...(desired.reset === undefined ? {} : { faultReset: desired.reset }),
      }),
      memory,
    );
    return { cycle, heater };
  }

  /** Latched above the cut-off at T0 + 10 s, cold again afterwards. */
  async function latchedCycle(desired: { reset: Reset; generation: number }) {
    const clock = new ManualClock(T0);
    const temp = { c: 15 };
    const { cycle, heater } = cycleWith(clock, desired, temp);
    await cycle.run();
    temp.c = 31;
    await clock.advance(at(s(10)) - clock.nowMs());
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault?.atMs, at(s(10)), 'latched');
    temp.c = 15;
    return { clock, cycle, heater, temp };
  }

  test('when a reset newer than the latch is stored, then the next cycle clears it, regulates and observes its generation', async () => {
    const desired: { reset: Reset; generation: number } = { reset: undefined, generation: 1 };
    const { clock, cycle, heater } = await latchedCycle(desired);
    await clock.advance(at(s(20)) - clock.nowMs());
    assert.equal(cycle.latchedFaultAt(clock.nowMs())?.reason, 'AboveCutoff', 'a reset now would clear it');
    assert.equal(cycle.latchedFaultAt(at(s(5))), undefined, 'a reset from before the latch would not');
    desired.reset = { atMs: clock.nowMs(), generation: 2 };
    desired.generation = 2;
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault, undefined, 'cleared by the stored reset');
    assert.equal(heater.level, 1, 'cold again: heating');
    assert.equal(cycle.status?.observedGeneration, 2, 'the reset is acted on: its generation observed');
    assert.equal(cycle.latchedFaultAt(clock.nowMs()), undefined, 'nothing left to reset');
  });

  test('when a latch stored before the reset is adopted after the reset was applied (storage failover), then the next cycle clears it again', async () => {
    const desired: { reset: Reset; generation: number } = { reset: undefined, generation: 1 };
    const { clock, cycle } = await latchedCycle(desired);
    const storedLatch = cycle.loopMemory.latchedFault!;
    await clock.advance(at(s(20)) - clock.nowMs());
    desired.reset = { atMs: clock.nowMs(), generation: 2 };
    desired.generation = 2;
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault, undefined, 'reset applied');
    // The database file comes back with the latch flushed before the reset: it is adopted.
    assert.equal(cycle.adoptLatchedFault(storedLatch), true);
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault, undefined, 'the stored reset covers the adopted latch');
  });

  test('when a latch newer than the stored reset is adopted, then it holds', async () => {
    const desired: { reset: Reset; generation: number } = { reset: undefined, generation: 1 };
    const { clock, cycle, heater } = await latchedCycle(desired);
    const storedLatch = cycle.loopMemory.latchedFault!;
    await clock.advance(at(s(20)) - clock.nowMs());
    desired.reset = { atMs: clock.nowMs(), generation: 2 };
    desired.generation = 2;
    await cycle.run();
    // The database file comes back with a latch from after the reset (another process, a
    // later fault): it is adopted and holds.
    const later = { ...storedLatch, atMs: at(s(25)) };
    assert.equal(cycle.adoptLatchedFault(later), true);
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault?.atMs, at(s(25)), 'a fault after the reset is a new fault');
    assert.equal(heater.level, 0, 'held safe');
  });

  test('when the wall clock steps forward between the reset and the cycle that applies it, then the reset still clears the latch', async () => {
    const desired: { reset: Reset; generation: number } = { reset: undefined, generation: 1 };
    const { clock, cycle } = await latchedCycle(desired);
    await clock.advance(at(s(20)) - clock.nowMs());
    desired.reset = { atMs: clock.nowMs(), generation: 2 };
    desired.generation = 2;
    cycle.resetCommitted(2);
    // NTP steps the clock 2 h forward before the loop's next cycle: the latch's time moves with it.
    cycle.shiftTimes(2 * HOUR_MS);
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(
      cycle.loopMemory.latchedFault,
      undefined,
      'cleared: the reset covers the latch it was sent for',
    );
  });

  test('when a reset stored before this process started meets a clock step before the first cycle, then it still clears the latch', async () => {
    const { clock, cycle } = await latchedCycle({ reset: undefined, generation: 1 });
    const storedMemory = cycle.loopMemory;
    const restarted = cycleWith(
      clock,
      { reset: { atMs: at(s(20)), generation: 2 }, generation: 2 },
      { c: 15 },
      storedMemory,
    );
    restarted.cycle.shiftTimes(2 * HOUR_MS);
    await clock.advance(at(s(30)) - clock.nowMs());
    await restarted.cycle.run();
    assert.equal(restarted.cycle.loopMemory.latchedFault, undefined);
  });

  test('when the stored reset is older than the latch, then the latch holds (a new fault)', async () => {
    const { clock, cycle, heater } = await latchedCycle({
      reset: { atMs: at(s(5)), generation: 2 },
      generation: 2,
    });
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(cycle.loopMemory.latchedFault?.atMs, at(s(10)));
    assert.equal(heater.level, 0, 'held safe');
  });

  test('when a restart brings back a memory from before the reset, then the first cycle clears the latch', async () => {
    const { clock, cycle } = await latchedCycle({ reset: undefined, generation: 1 });
    const staleMemory = cycle.loopMemory;
    await clock.advance(at(min(1)) - clock.nowMs());
    const restarted = cycleWith(
      clock,
      { reset: { atMs: at(s(20)), generation: 2 }, generation: 2 },
      { c: 15 },
      staleMemory,
    );
    await restarted.cycle.run();
    assert.equal(restarted.cycle.loopMemory.latchedFault, undefined, 'the stored reset clears it again');
    assert.equal(restarted.heater.level, 1);
  });

  test('when a fault latches again after the reset was applied, even at an earlier time (wall clock set back), then it holds, also after a restart', async () => {
    const desired: { reset: Reset; generation: number } = { reset: undefined, generation: 1 };
    const { clock, cycle, heater, temp } = await latchedCycle(desired);
    // Read through a function: an assertion on the property would narrow it for good.
    const latch = () => cycle.loopMemory.latchedFault;
    desired.reset = { atMs: at(min(10)), generation: 2 };
    await clock.advance(at(s(30)) - clock.nowMs());
    await cycle.run();
    assert.equal(latch(), undefined, 'applied');
    // Too hot again at a clock time before the reset's (as after the clock was set back).
    temp.c = 31;
    await clock.advance(at(min(1)) - clock.nowMs());
    await cycle.run();
    assert.equal(latch()?.atMs, at(min(1)), 'a new latch, earlier than the reset');
    temp.c = 15;
    await clock.advance(at(min(2)) - clock.nowMs());
    await cycle.run();
    assert.ok(cycle.loopMemory.latchedFault, 'not taken for the latch that was reset');
    assert.equal(heater.level, 0);
    const restarted = cycleWith(clock, desired, temp, cycle.loopMemory);
    await clock.advance(at(min(3)) - clock.nowMs());
    await restarted.cycle.run();
    assert.ok(
      restarted.cycle.loopMemory.latchedFault,
      'the memory names the reset it applied: held after a restart',
    );
  });
});

describe('applyStoredFaultReset (pure)', () => {
  const latched = (atMs: number, faultResetGeneration?: number) => ({
    ...initialLoopMemory(),
    latchedFault: { reason: 'AboveCutoff' as const, atMs, message: 'above' },
    ...(faultResetGeneration === undefined ? {} : { faultResetGeneration }),
  });
  const cases: Array<
    [string, number | undefined, { atMs: number; generation: number } | undefined, boolean]
  > = [
    ['no reset stored', undefined, undefined, false],
    ['reset before the latch', undefined, { atMs: at(s(5)), generation: 3 }, false],
    ['reset at the latch time', undefined, { atMs: at(s(10)), generation: 3 }, true],
    ['reset after the latch', undefined, { atMs: at(s(20)), generation: 3 }, true],
    ['reset after the latch, applied before (same generation)', 3, { atMs: at(s(20)), generation: 3 }, false],
    ['reset after the latch, an older one applied before', 2, { atMs: at(s(20)), generation: 3 }, true],
    ['reset time not a number', undefined, { atMs: Number.NaN, generation: 3 }, false],
  ];
  for (const [name, applied, reset, cleared] of cases) {
    test(`latch at +10 s, ${name}: ${cleared ? 'cleared' : 'kept'}`, () => {
      const memory = latched(at(s(10)), applied);
      const next = applyStoredFaultReset(memory, reset);
      assert.equal(next.latchedFault === undefined, cleared);
      if (cleared) assert.equal(next.faultResetGeneration, reset?.generation, 'names the reset it applied');
      if (!cleared && (reset === undefined || applied === reset.generation || Number.isNaN(reset.atMs)))
        assert.equal(next, memory, 'unchanged memory is the same object');
    });
  }
});
