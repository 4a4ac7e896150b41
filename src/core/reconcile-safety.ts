/**
 * reconcile's safety steps (reconcile.ts): every actuator held at its safe level, and the safety
 * monitors run on the levels chosen (safety-monitors.ts), which may hold a start back or latch a
 * fault that takes the loop safe in this same cycle.
 */
import { holdRelayOff, safeLevels } from './actuation.js';
import type { WantedWhy } from './command.js';
import type { LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { latchedDetail } from './reconcile-gate.js';
import { idleSafetyMemory, safetyMonitors } from './safety-monitors.js';
import type { ReadingVerdict } from './sensor-health.js';

/** The memory a step leaves, and the times at which something it decided changes by itself. */
export interface Stepped {
  memory: LoopMemory;
  wakeTimes: number[];
}

/** The cycle so far: each actuator's wanted level and why, with the memory and wake times. */
export interface Cycle extends Stepped {
  levels: Record<string, number>;
  why: Record<string, WantedWhy>;
}

/** Every actuator at its safe level; the controller and the watches stop. */
export function holdSafe(spec: LoopSpec, state: Stepped, detail: string, nowMs: number): Cycle {
  const safe = safeLevels(spec, state.memory.relays, nowMs);
  const { effectWatch: _stopped, safety, ...rest } = state.memory;
  const idle = idleSafetyMemory(safety);
  const why: WantedWhy = { reason: 'safe-state', detail };
  return {
    levels: safe.levels,
    why: Object.fromEntries(Object.keys(safe.levels).map((id) => [id, why])),
    memory: {
      ...rest,
      relays: safe.relays,
      regulating: false,
      output: 0,
      hysteresisOn: { raise: false, lower: false },
      ...(idle ? { safety: idle } : {}),
    },
    wakeTimes: state.wakeTimes,
  };
}

/** Step 4: the safety monitors on the levels chosen: starts held back, or a fault latched. */
export function monitorLevels(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  verdict: ReadingVerdict,
  before: LoopMemory,
  cycle: Cycle,
  nowMs: number,
): Cycle {
  const monitored = safetyMonitors(
    spec,
    before.safety,
    {
      value: verdict.ok ? verdict.value : undefined,
      setpoint: desired.setpoint,
      regulating: cycle.memory.regulating,
      output: cycle.memory.output,
      levels: cycle.levels,
      observed: observed.actuators,
      lastCommanded: before.commands,
      convergedBand: spec.convergedBand,
    },
    nowMs,
  );
  const levels = { ...cycle.levels };
  const why = { ...cycle.why };
  let relays = cycle.memory.relays;
  for (const [id, detail] of Object.entries(monitored.heldOff)) {
    levels[id] = 0;
    relays = holdRelayOff(relays, before.relays, id);
    why[id] = { reason: 'regulate', detail };
  }
  const { safety: _replaced, ...rest } = cycle.memory;
  const memory = { ...rest, relays, ...(monitored.memory ? { safety: monitored.memory } : {}) };
  const checked = { levels, why, memory, wakeTimes: [...cycle.wakeTimes, ...monitored.wakeTimes] };
  if (!monitored.fault || memory.latchedFault) return checked;
  // Latched this cycle: safe at once, not at the next one.
  const latched = { ...checked, memory: { ...memory, latchedFault: monitored.fault } };
  return holdSafe(spec, latched, latchedDetail(monitored.fault), nowMs);
}
