import { setpointFeedforward } from './feedforward.js';
import { type HysteresisParams, hysteresisStep } from './hysteresis.js';
import { directionsForMode, type LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { clamp } from './numbers.js';
import { type PidMemory, type PidParams, pidInitialMemory, pidStep, restOffset } from './pid.js';
import type { Direction, Mode } from './types.js';

/** What the controller decided this cycle: its signed output and the memory it leaves. */
export interface ControllerResult {
  /** Signed output −1..1: positive raises the quantity, negative lowers it. */
  output: number;
  pid: PidMemory;
  hysteresisOn: Record<Direction, boolean>;
}

/**
 * The controller's step for a fresh reading `measured`: hysteresis or PID, within the range
 * the mode allows. `memory` is the loop's memory before this cycle.
 */
export function controllerOutput(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  measured: number,
  memory: Pick<LoopMemory, 'regulating' | 'pid' | 'hysteresisOn'>,
): ControllerResult {
  const directions = enabledDirections(spec, desired.mode);
  const controller = spec.controller;
  if (controller.type === 'hysteresis') {
    const hysteresisOn = hysteresisDirections(
      controller.hysteresis,
      spec,
      desired,
      measured,
      memory,
      directions,
    );
    const output = hysteresisOn.raise ? 1 : hysteresisOn.lower ? -1 : 0;
    return { output, pid: memory.pid, hysteresisOn };
  }
  const params = {
    ...controller.pid,
    outputMin: directions.lower ? -1 : 0,
    outputMax: directions.raise ? 1 : 0,
    errorDeadband: spec.deadband,
  };
  // Resuming from off or a fault: start from what the actuators really do now (bumpless).
  const start = memory.regulating ? memory.pid : resumedPidMemory(spec, desired, observed, params);
  const reading = observed.reading!;
  const feedforward = controller.model ? setpointFeedforward(controller.model, desired.setpoint) : 0;
  const result = pidStep(params, start, {
    setpoint: desired.setpoint,
    measured,
    atMs: reading.atMs,
    feedforward,
  });
  // A mode that narrows the range (heat_cool → heat) takes effect even without a new reading.
  const output = clamp(result.output, params.outputMin, params.outputMax);
  return { output, pid: result.memory, hysteresisOn: memory.hysteresisOn };
}

/** Hysteresis per direction; the raise side wins, so the two are never both on. */
function hysteresisDirections(
  params: HysteresisParams,
  spec: LoopSpec,
  desired: LoopDesired,
  measured: number,
  memory: Pick<LoopMemory, 'hysteresisOn'>,
  directions: Record<Direction, boolean>,
): Record<Direction, boolean> {
  const half = spec.deadband / 2;
  const raise =
    directions.raise &&
    hysteresisStep(params, memory.hysteresisOn.raise, desired.setpoint - half, measured, 'raise');
  const lower =
    directions.lower &&
    !raise &&
    hysteresisStep(params, memory.hysteresisOn.lower, desired.setpoint + half, measured, 'lower');
  return { raise, lower };
}

/**
 * PID memory for a controller that starts regulating: its integrator at the actuators' real
 * output. With a setpoint weight b < 1 the proportional term carries Kp·(b − 1)·r at rest,
 * which the integrator cancels (see pidStep): it starts there too, or the output starts that
 * far low.
 */
function resumedPidMemory(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  params: PidParams,
): PidMemory {
  const actual = clamp(actualSignedOutput(spec, observed), params.outputMin, params.outputMax);
  return { ...pidInitialMemory(actual), integral: actual - restOffset(params, desired.setpoint) };
}

/** Directions the mode allows and the loop has an actuator for. */
function enabledDirections(spec: LoopSpec, mode: Mode): Record<Direction, boolean> {
  const allowed = directionsForMode(mode);
  return {
    raise: allowed.raise && spec.raise !== undefined,
    lower: allowed.lower && spec.lower !== undefined,
  };
}

function actualSignedOutput(spec: LoopSpec, observed: LoopObserved): number {
  const raise = spec.raise ? (observed.actuators[spec.raise.id] ?? 0) : 0;
  const lower = spec.lower ? (observed.actuators[spec.lower.id] ?? 0) : 0;
  return raise - lower;
}
