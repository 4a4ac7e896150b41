/**
 * LoopReconciler and a PID's disturbance sensor: its reading reaches reconcile as
 * observed.disturbance (the feedforward uses it), and losing it never faults the loop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { Reading } from '../../src/core/types.js';
import type { ActuatorDriver } from '../../src/drivers/types.js';
import { type CompletedCycle, LoopReconciler } from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { heaterRelayLoop, s, T0 } from '../core/fixtures.js';

/** A relay that obeys. */
class Relay implements ActuatorDriver {
  readonly simulated = true;
  readonly kind = 'relay' as const;
  level = 0;
  constructor(readonly id: string) {}
  async observe() {
    return this.level;
  }
  async write(level: number) {
    this.level = level;
  }
}

const SPEC: LoopSpec = heaterRelayLoop({
  controller: {
    type: 'pid',
    pid: { kp: 0.5, tiS: 1_200, tdS: 0 },
    model: { gain: 20, ambient: 10 },
    disturbance: {
      sensorId: 'outdoor',
      coupling: 1,
      staleAfterMs: s(60),
      plausibleMin: -55,
      plausibleMax: 125,
    },
  },
});

/** The room's reconciler at 19.5 °C; the outdoor sensor's latest reading is `outdoor()`. */
function roomReconciler(clock: ManualClock, outdoor: () => Reading | undefined, cycles: CompletedCycle[]) {
  const heater = new Relay('heater');
  const reconciler = new LoopReconciler({
    spec: SPEC,
    desired: () => ({ generation: 1, setpoint: 20, mode: 'heat' }),
    latestReading: () => ({ value: 19.5, atMs: clock.nowMs() }),
    disturbanceReading: outdoor,
    actuators: new Map([['heater', heater]]),
    clock,
    logger: pino({ level: 'silent' }),
    onCycle: (cycle) => cycles.push(cycle),
  });
  return { reconciler };
}

test('given an outdoor sensor, when a cycle runs, then its reading is what the feedforward used', async () => {
  const clock = new ManualClock(T0);
  const cycles: CompletedCycle[] = [];
  const { reconciler } = roomReconciler(clock, () => ({ value: 4, atMs: clock.nowMs() }), cycles);
  await reconciler.run();
  assert.equal(cycles.at(-1)?.memory.pid.lastDisturbance?.used, 4);
  // Outdoor 4 °C instead of the model's 10: holding 20 °C needs (20 − 4) / 20 = 0.8.
  assert.equal(cycles.at(-1)?.memory.pid.lastFeedforward, 0.8);
});

test('when the outdoor sensor goes silent or stale, then the loop regulates on without it and without a fault', async () => {
  const clock = new ManualClock(T0);
  const cycles: CompletedCycle[] = [];
  let outdoor: Reading | undefined = { value: 4, atMs: T0 };
  const { reconciler } = roomReconciler(clock, () => outdoor, cycles);
  await reconciler.run();
  for (const [label, next] of [
    ['stale', { value: 4, atMs: T0 }],
    ['gone', undefined],
    ['not a number', { value: Number.NaN, atMs: T0 + s(300) }],
  ] as const) {
    await clock.advance(s(100));
    outdoor = next;
    await reconciler.run();
    const last = cycles.at(-1)!;
    assert.equal(last.memory.pid.lastDisturbance, undefined, `${label}: not used`);
    assert.equal(last.memory.latchedFault, undefined, `${label}: no fault`);
    const faulted = last.status.conditions.find((c) => c.type === 'Faulted');
    assert.notEqual(faulted?.status, 'True', `${label}: not faulted`);
  }
  // 0.5 °C below the setpoint, the heater's PID still asks for heat.
  assert.ok(cycles.at(-1)!.memory.output > 0, 'still heating');
});
