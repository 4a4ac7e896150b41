import { absorbedFeedforward, type Feedforward, feedforward } from './feedforward.js';
import { type HysteresisParams, hysteresisStep } from './hysteresis.js';
import { type ControllerSpec, directionsForMode, type LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { clamp } from './numbers.js';
import {
  DEFAULT_MAX_GAP_S,
  type PidMemory,
  type PidParams,
  pidInitialMemory,
  pidStep,
  restOffset,
} from './pid.js';
import { msToS } from './time.js';
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
  const side = sideActing(spec, directions, desired, observed, measured, memory);
  const params = {
    ...sideGains(controller, side),
    outputMin: directions.lower ? -1 : 0,
    outputMax: directions.raise ? 1 : 0,
    errorDeadband: spec.deadband,
  };
  const reading = observed.reading!;
  if (memory.regulating && memory.pid.lastAtMs === reading.atMs) {
    // No news: pidStep repeats its last output, and the feedforward's lead stays where it was.
    const output = clamp(memory.pid.lastOutput, params.outputMin, params.outputMax);
    return { output, pid: memory.pid, hysteresisOn: memory.hysteresisOn };
  }
  const ff = controllerFeedforward(spec, desired, observed, memory);
  // Resuming from off or a fault: start from what the actuators really do now (bumpless).
  const start = memory.regulating
    ? switchedSide(
        controller,
        absorbFeedforwardChange(spec, memory.pid, ff),
        side,
        desired.setpoint,
        spec.deadband,
      )
    : resumedPidMemory(spec, desired, observed, params, ff);
  const result = pidStep(params, start, {
    setpoint: desired.setpoint,
    measured,
    atMs: reading.atMs,
    feedforward: ff.value,
  });
  const stepped = controller.lowerPid === undefined ? result.memory : { ...result.memory, side };
  const pid =
    ff.disturbance === undefined
      ? withoutDisturbance(stepped)
      : { ...stepped, lastDisturbance: ff.disturbance };
  // A mode that narrows the range (heat_cool → heat) takes effect even without a new reading.
  const output = clamp(result.output, params.outputMin, params.outputMax);
  return { output, pid, hysteresisOn: memory.hysteresisOn };
}

/**
 * The side whose gains a split-range loop with per-side gains runs with: the only one the mode
 * enables; else, while regulating, the side the output at rest (integral, setpoint-weight offset
 * and feedforward: what the output would be with no error) is on, which moves slowly, once the
 * error points that way too (else the side kept); else the
 * sign of what the actuators really do (resuming, as resumedPidMemory starts from it), else of
 * the error.
 *
 * Why not the sign of the last output: near 0 it flips with every noisy reading, and a step that
 * crosses 0 taken with the larger kp one way and the smaller the other pumps the output towards
 * one side on zero-mean noise (measured: a fridge with 10× the heater's kp held 0.76 °C off the
 * setpoint). The output at rest does not follow the reading's noise, so within a side the PID is
 * linear and nothing is pumped; see switchedSide for the crossing itself.
 */
export function sideActing(
  spec: LoopSpec,
  directions: Record<Direction, boolean>,
  desired: Pick<LoopDesired, 'setpoint'>,
  observed: LoopObserved,
  measured: number,
  memory: Pick<LoopMemory, 'regulating' | 'pid'>,
): Direction {
  if (!directions.lower) return 'raise';
  if (!directions.raise) return 'lower';
  const controller = spec.controller;
  const kept = memory.pid.side;
  if (memory.regulating && kept !== undefined && controller.type === 'pid') {
    const atRest = restOutput(sideGains(controller, kept), memory.pid, desired.setpoint, spec.deadband);
    // And only towards the side the error asks for: after a setpoint raise with b < 1 the output
    // at rest dips below 0 (kp·(b − 1)·Δr at once, the integral catching up over Ti) while the
    // heater is heating up to it, which would run the heater on the cooler's gains.
    const error = desired.setpoint - measured;
    if (atRest < 0 && error < 0) return 'lower';
    if (atRest > 0 && error > 0) return 'raise';
    return kept;
  }
  const last = memory.regulating ? memory.pid.lastOutput : actualSignedOutput(spec, observed);
  if (last < 0) return 'lower';
  if (last > 0) return 'raise';
  return desired.setpoint - measured < 0 ? 'lower' : 'raise';
}

/** The output with no error and no derivative: integral, setpoint-weight offset, feedforward. */
function restOutput(
  gains: Pick<PidParams, 'kp' | 'setpointWeight'>,
  pid: PidMemory,
  setpoint: number,
  errorDeadband: number,
): number {
  return pid.integral + restOffset({ ...gains, errorDeadband }, setpoint) + pid.lastFeedforward;
}

/**
 * The memory to step from when the side changes: the integral re-based so the output at rest
 * stays where it was (the setpoint-weight offset kp·(b − 1)·r differs between the sides), and the
 * gains marked as the new side's so pidStep does not re-base the proportional and derivative
 * terms too. Those change by (Δkp)·e and Δ(kp·Td)·dy/dt at the crossing: a bump the size of the
 * noise where the output is near 0 anyway, never stored in the integral (re-basing them would
 * store it, and its sign follows the crossing's direction: the pump sideActing avoids).
 */
function switchedSide(
  controller: Extract<ControllerSpec, { type: 'pid' }>,
  pid: PidMemory,
  side: Direction,
  setpoint: number,
  errorDeadband: number,
): PidMemory {
  if (controller.lowerPid === undefined || pid.side === undefined || pid.side === side) return pid;
  const before = sideGains(controller, pid.side);
  const after = sideGains(controller, side);
  const offsetChange =
    restOffset({ ...after, errorDeadband }, setpoint) - restOffset({ ...before, errorDeadband }, setpoint);
  return {
    ...pid,
    integral: pid.integral - offsetChange,
    lastKp: after.kp,
    lastTdS: after.tdS,
    lastSetpointWeight: after.setpointWeight ?? 1,
  };
}

/** The PID gains of `side`: the lower side's own when the spec has them, else `pid`'s. */
function sideGains(
  controller: Extract<ControllerSpec, { type: 'pid' }>,
  side: Direction,
): Omit<PidParams, 'outputMin' | 'outputMax' | 'errorDeadband'> {
  const lower = controller.lowerPid;
  if (side === 'raise' || lower === undefined) return controller.pid;
  const { derivativeFilterS: _raiseFilter, trackingTimeS: _raiseTracking, ...shared } = controller.pid;
  // A key present but undefined must not wipe the shared one (b absent: the raise side's).
  const own = Object.fromEntries(Object.entries(lower).filter(([, value]) => value !== undefined));
  return { ...shared, ...own } as typeof controller.pid;
}

const NO_FEEDFORWARD: Feedforward = { value: 0, disturbance: undefined };

/** The PID's feedforward this step: from the model, with the disturbance reading when usable. */
function controllerFeedforward(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  memory: Pick<LoopMemory, 'regulating' | 'pid'>,
): Feedforward {
  const controller = spec.controller;
  if (controller.type !== 'pid' || !controller.model) return NO_FEEDFORWARD;
  const atMs = observed.reading!.atMs;
  const { lastAtMs } = memory.pid;
  // The lead continues across regular readings only (the PID's own gap rule: maxGapS).
  const gapS = lastAtMs === undefined ? undefined : msToS(atMs - lastAtMs);
  const maxGapS = controller.pid.maxGapS ?? DEFAULT_MAX_GAP_S;
  const continues = memory.regulating && gapS !== undefined && gapS > 0 && gapS <= maxGapS;
  return feedforward(controller.model, controller.disturbance, desired.setpoint, {
    reading: observed.disturbance,
    atMs,
    before: memory.regulating ? memory.pid.lastDisturbance : undefined,
    dtS: continues ? gapS : undefined,
  });
}

/**
 * The memory with the integrator moved by the feedforward's change that must not reach the
 * output (feedforward.ts: everything but a change of the measured disturbance).
 */
function absorbFeedforwardChange(spec: LoopSpec, pid: PidMemory, ff: Feedforward): PidMemory {
  const controller = spec.controller;
  const before = { value: pid.lastFeedforward, disturbance: pid.lastDisturbance };
  const absorbed =
    controller.type === 'pid' && controller.model
      ? absorbedFeedforward(controller.model, controller.disturbance?.coupling ?? 1, before, ff)
      : ff.value - pid.lastFeedforward;
  return absorbed === 0 ? pid : { ...pid, integral: pid.integral - absorbed };
}

function withoutDisturbance(pid: PidMemory): PidMemory {
  const { lastDisturbance: _unused, ...rest } = pid;
  return rest;
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
 * output, less the feedforward, which the output then adds back: no bump (a feedforward head
 * start winds the integrator past on a dead-time-dominated plant, see feedforward.ts). With a
 * setpoint weight b < 1 the proportional term carries Kp·(b − 1)·r at rest, which the
 * integrator cancels (see pidStep): it starts there too, or the output starts that far low.
 */
function resumedPidMemory(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  params: PidParams,
  ff: Feedforward,
): PidMemory {
  const actual = clamp(actualSignedOutput(spec, observed), params.outputMin, params.outputMax);
  return {
    ...pidInitialMemory(actual),
    integral: actual - restOffset(params, desired.setpoint) - ff.value,
    lastFeedforward: ff.value,
    ...(ff.disturbance === undefined ? {} : { lastDisturbance: ff.disturbance }),
  };
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
