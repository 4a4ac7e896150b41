import type { LoopSpec } from '../loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from '../loop-state.js';
import { restOffset } from '../pid.js';
import { judgeReading, type ReadingVerdict } from '../sensor-health.js';
import type { Direction } from '../types.js';
import {
  type AutotuneMemory,
  type AutotuneOptions,
  abortAutotune,
  isActive,
  MAX_HYSTERESIS,
  MAX_STEP_DEPTH,
  noteAppliedLevel,
  requestAbort,
  startAutotune,
  stepAutotune,
} from './autotune.js';
import { quietReadingProblem, readingCadenceProblem } from './reading-cadence.js';

/**
 * The autotune on a loop: start and cancel for the runtime (like resetLatchedFault), and the two
 * hooks reconcile calls each cycle while a run is active. Pure.
 *
 * Safety stays with reconcile: a run starts only on a loop that may regulate, and whatever
 * holds the loop safe during a run (a latched fault, mode off, a bad reading, an interlock, a
 * monitor's fault) ends the run in that same cycle (settleAutotune).
 */

export type LoopAutotuneStart = { ok: true; memory: LoopMemory } | { ok: false; reason: string };

export function startLoopAutotune(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  memory: LoopMemory,
  options: AutotuneOptions,
  nowMs: number,
): LoopAutotuneStart {
  if (isActive(memory.autotune)) return { ok: false, reason: 'an autotune is already running' };
  if (memory.latchedFault) {
    return {
      ok: false,
      reason: `a latched fault holds the loop safe (${memory.latchedFault.reason}): reset it first`,
    };
  }
  const unfit = sensorUnfit(spec, observed, nowMs);
  if (unfit !== undefined) return { ok: false, reason: unfit };
  const side = options.side;
  // A continuous actuator that was regulating starts from the PID's output at rest (no
  // proportional or derivative part): the level the plant settled with, if it settled, not
  // this cycle's output, which carries kp·noise (a kettle's kp 0.09 × 0.1 °C moves K 80 by
  // 0.8 °C, half the first step). A relay's mean level is its duty: the output.
  const signed = (direction: Direction) =>
    memory.regulating && kindOn(spec, direction) === 'continuous'
      ? restOutput(spec, memory, desired, direction)
      : memory.output;
  const current = (direction: Direction) =>
    Math.max(0, direction === 'raise' ? signed(direction) : -signed(direction));
  const started = startAutotune(
    {
      mode: desired.mode,
      setpoint: desired.setpoint,
      controller: spec.controller.type,
      actuators: {
        ...(spec.raise ? { raise: spec.raise.kind } : {}),
        ...(spec.lower ? { lower: spec.lower.kind } : {}),
      },
      // The PID's output on the tuned side is the actuator's mean level (a relay's duty).
      currentLevel: current(side ?? (memory.output < 0 ? 'lower' : 'raise')),
      // A loop that was regulating is not at rest: a relay ripples, a duty still moves.
      atRest: !memory.regulating,
    },
    { ...swingCaps(spec), ...options },
    nowMs,
  );
  if (!started.ok) return started;
  // With the side decided, the level is that side's (heat_cool: the other side's output is 0).
  const autotune = { ...started.memory, initialLevel: current(started.memory.side) };
  return { ok: true, memory: { ...memory, autotune } };
}

/** Why the loop's sensor cannot start a run: no usable reading, or not often enough (reading-cadence.ts). */
function sensorUnfit(spec: LoopSpec, observed: LoopObserved, nowMs: number): string | undefined {
  const verdict = judgeReading(observed.reading, nowMs, spec);
  if (!verdict.ok) return `the sensor cannot be used: ${verdict.message}`;
  return readingCadenceProblem(spec, observed.reading);
}

/**
 * Ends a running autotune (a person's cancel) like every other abort: the next reconcile ends it
 * with `reason` and holds every actuator safe in that cycle (the reason in its status), and the
 * controller takes over from the next cycle, bumplessly from the actuators' real level. Ended
 * here at once, the PID would resume from its memory of before the run, in the middle of the
 * relay's swing. `_nowMs`: kept for the callers; the run's end is stamped by that cycle.
 */
export function cancelLoopAutotune(memory: LoopMemory, reason: string, _nowMs: number): LoopMemory {
  if (!isActive(memory.autotune)) return memory;
  return { ...memory, autotune: requestAbort(memory.autotune, reason) };
}

/** What a cycle's autotune step decided. */
export interface AutotuneCycle {
  autotune: AutotuneMemory;
  /** Signed output for this cycle while the run goes on (−level for the lower side). */
  output?: number;
  /** The run ended this cycle: aborted (the loop goes safe) or done (the PID takes over). */
  ended?: 'aborted' | 'done';
}

/**
 * One step of the running autotune on a reading the gate found usable (`verdict`). A mode or
 * setpoint change, the time limit, a setpoint it cannot reach, a clock that went back, a reading
 * gone quiet (kept in force by its device's liveness only: no readings to record): aborted.
 */
export function stepLoopAutotune(
  autotune: AutotuneMemory,
  desired: LoopDesired,
  observed: LoopObserved,
  nowMs: number,
  verdict?: ReadingVerdict,
): AutotuneCycle {
  // A step back the runtime did not notice (shiftLoopMemory asks for the abort when it did) shows
  // as times ahead.
  const clockBack = autotune.startedAtMs > nowMs || (autotune.lastReadingAtMs ?? 0) > nowMs;
  const interrupted = clockBack ? 'the clock went back' : quietReadingProblem(verdict);
  const step = stepAutotune(
    autotune,
    {
      reading: observed.reading,
      mode: desired.mode,
      setpoint: desired.setpoint,
      ...(interrupted === undefined ? {} : { interrupted }),
    },
    nowMs,
  );
  if (step.level === undefined) {
    return { autotune: step.memory, ended: step.memory.phase === 'done' ? 'done' : 'aborted' };
  }
  return { autotune: step.memory, output: step.memory.side === 'raise' ? step.level : -step.level };
}

/**
 * After the levels are chosen and checked: a run still active in a cycle that held the loop
 * safe ends with that reason; else the level really applied (minimum times, start caps) goes
 * into the record.
 */
export function settleAutotune(
  spec: LoopSpec,
  autotune: AutotuneMemory,
  cycle: { regulating: boolean; levels: Record<string, number>; safeDetail?: string },
  nowMs: number,
): AutotuneMemory {
  if (!isActive(autotune)) return autotune;
  if (!cycle.regulating) {
    return abortAutotune(
      autotune,
      autotune.pendingAbort ?? cycle.safeDetail ?? 'the loop was held safe',
      nowMs,
    );
  }
  const actuator = autotune.side === 'raise' ? spec.raise : spec.lower;
  const level = actuator === undefined ? 0 : (cycle.levels[actuator.id] ?? 0);
  return noteAppliedLevel(autotune, level, nowMs);
}

function kindOn(spec: LoopSpec, direction: Direction): 'relay' | 'continuous' | undefined {
  return (direction === 'raise' ? spec.raise : spec.lower)?.kind;
}

/** The PID's output with no error and no derivative (controller-output.ts' restOutput). */
function restOutput(spec: LoopSpec, memory: LoopMemory, desired: LoopDesired, direction: Direction): number {
  const controller = spec.controller;
  if (controller.type !== 'pid') return memory.output;
  const gains =
    direction === 'lower' && controller.lowerPid
      ? { ...controller.pid, ...controller.lowerPid }
      : controller.pid;
  const offset = restOffset({ ...gains, errorDeadband: spec.deadband }, desired.setpoint);
  return memory.pid.integral + offset + memory.pid.lastFeedforward;
}

/**
 * The widest band and deepest first step a run may use, in the loop's unit: the defaults are
 * for °C; a humidity sensor is noisier in %RH (a DHT22's σ is about 0.3 %RH) and a generic loop
 * has its own unit, so its caps are shares of its plausible range.
 */
function swingCaps(spec: LoopSpec): Pick<AutotuneOptions, 'maxHysteresis' | 'maxStepDepth'> {
  switch (spec.quantity) {
    case 'temperature':
      return { maxHysteresis: MAX_HYSTERESIS, maxStepDepth: MAX_STEP_DEPTH };
    case 'humidity':
      return { maxHysteresis: 3 * MAX_HYSTERESIS, maxStepDepth: 3 * MAX_STEP_DEPTH };
    case 'generic': {
      const span = spec.plausibleMax - spec.plausibleMin;
      return { maxHysteresis: 0.02 * span, maxStepDepth: 0.05 * span };
    }
  }
}
