import { setpointFeedforward } from './feedforward.js';
import { hysteresisStep } from './hysteresis.js';
import { directionsForMode, type LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { pidInitialMemory, pidStep } from './pid.js';
import type { Direction, Mode } from './types.js';

/** Signed output: positive raises the quantity, negative lowers it. Updates controller memory. */
export function controllerOutput(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  measured: number,
  next: LoopMemory,
): number {
  const directions = enabledDirections(spec, desired.mode);
  const outputMin = directions.lower ? -1 : 0;
  const outputMax = directions.raise ? 1 : 0;
  const controller = spec.controller;

  if (controller.type === 'hysteresis') {
    const half = spec.deadband / 2;
    const raise =
      directions.raise &&
      hysteresisStep(
        controller.hysteresis,
        next.hysteresisOn.raise,
        desired.setpoint - half,
        measured,
        'raise',
      );
    const lower =
      directions.lower &&
      !raise &&
      hysteresisStep(
        controller.hysteresis,
        next.hysteresisOn.lower,
        desired.setpoint + half,
        measured,
        'lower',
      );
    next.hysteresisOn = { raise, lower };
    return raise ? 1 : lower ? -1 : 0;
  }

  if (!next.regulating) {
    // Resuming from off or a fault: start from what the actuators really do now (bumpless).
    const actual = Math.min(outputMax, Math.max(outputMin, actualSignedOutput(spec, observed)));
    // With a setpoint weight b < 1 the proportional term carries Kp·(b − 1)·r at rest, which the
    // integrator cancels (see pidStep): start it there too, or the output starts that far low.
    const { kp, setpointWeight = 1 } = controller.pid;
    const restOffset = spec.deadband > 0 ? 0 : kp * (setpointWeight - 1) * desired.setpoint;
    next.pid = { ...pidInitialMemory(actual), integral: actual - restOffset };
  }
  const reading = observed.reading!;
  const feedforward = controller.model ? setpointFeedforward(controller.model, desired.setpoint) : 0;
  const result = pidStep(
    { ...controller.pid, outputMin, outputMax, errorDeadband: spec.deadband },
    next.pid,
    { setpoint: desired.setpoint, measured, atMs: reading.atMs, feedforward },
  );
  next.pid = result.memory;
  // A mode that narrows the range (heat_cool → heat) takes effect even without a new reading.
  return Math.min(outputMax, Math.max(outputMin, result.output));
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
