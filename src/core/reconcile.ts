import { type ActuatorCommand, type CommandMemory, decideCommand } from './command.js';
import { setpointFeedforward } from './feedforward.js';
import { hysteresisStep } from './hysteresis.js';
import { type ActuatorSpec, directionsForMode, type LoopSpec, loopActuators } from './loop-spec.js';
import { type PidMemory, pidInitialMemory, pidStep } from './pid.js';
import { judgeReading, type ReadingVerdict } from './sensor-health.js';
import { type LoopStatus, statusConditions } from './status.js';
import {
  holdForMinimumTimes,
  type TimeProportioningMemory,
  timeProportion,
  timeProportioningInitialMemory,
} from './time-proportioning.js';
import type { ActuatorLevel, Condition, Direction, Mode, Reading } from './types.js';

/**
 * reconcile(spec, desired, observed, memory, now) → wanted levels, commands, new memory,
 * status and next wake-up. Pure: the whole decision of one loop cycle, from its full inputs.
 *
 * Order of precedence (safety first):
 *   1. mode off                         → every actuator at its safe level, at once
 *   2. reading missing/stale/NaN/absurd → every actuator at its safe level, at once
 *   3. otherwise regulate: controller output (−1..1, sign = direction) → split range with a
 *      changeover delay → time-proportioning for relays (minimum on/off times) → levels.
 * Then each actuator is commanded only if its observed level differs (idempotent act).
 */

/** Desired state of a loop: what people asked for, with the generation that asked it. */
export interface LoopDesired {
  generation: number;
  setpoint: number;
  mode: Mode;
}

/** Observed state, read fresh by the runtime each cycle. */
export interface LoopObserved {
  reading?: Reading;
  /** Actual level of each actuator (GPIO readback, a plug's state); undefined = unknown. */
  actuators: Record<string, ActuatorLevel>;
}

/** What a loop remembers between cycles (persisted, so a restart resumes where it was). */
export interface LoopMemory {
  /** The controller was running last cycle (not off, not faulted). */
  regulating: boolean;
  pid: PidMemory;
  /** Hysteresis controller: whether each direction is switched on. */
  hysteresisOn: Record<Direction, boolean>;
  /** Per relay: time-proportioning window and last switch time (minimum on/off times). */
  relays: Record<string, TimeProportioningMemory>;
  /** Per actuator: last command, for retries, keep-alive and drift detection. */
  commands: Record<string, CommandMemory>;
  /** Last time each direction's actuator was wanted above 0, ms (changeover delay). */
  lastActiveMs: Partial<Record<Direction, number>>;
  /** Signed controller output last cycle, −1..1. */
  output: number;
  conditions: Condition[];
}

export interface ReconcileResult {
  /** Level each actuator should have now. */
  wanted: Record<string, number>;
  /** Writes to perform: only where observed differs (or a retry/keep-alive is due). */
  commands: ActuatorCommand[];
  memory: LoopMemory;
  status: LoopStatus;
  /** The next time something changes by itself (relay switch, staleness, retry), ms. */
  nextWakeMs: number;
}

export function initialLoopMemory(): LoopMemory {
  return {
    regulating: false,
    pid: pidInitialMemory(0),
    hysteresisOn: { raise: false, lower: false },
    relays: {},
    commands: {},
    lastActiveMs: {},
    output: 0,
    conditions: [],
  };
}

export function reconcile(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  memory: LoopMemory,
  nowMs: number,
): ReconcileResult {
  const verdict = judgeReading(observed.reading, nowMs, spec);
  const regulate = desired.mode !== 'off' && verdict.ok;
  const wakeTimes: number[] = [];
  if (observed.reading && verdict.ok) wakeTimes.push(observed.reading.atMs + spec.staleAfterMs + 1);

  const next: LoopMemory = { ...memory, relays: { ...memory.relays }, commands: { ...memory.commands } };
  const levels: Record<string, number> = {};
  const why = new Map<string, { reason: 'regulate' | 'safe-state'; detail: string }>();

  if (!regulate) {
    const detail = desired.mode === 'off' ? 'mode off' : `sensor ${verdict.ok ? 'ok' : verdict.reason}`;
    for (const { actuator } of loopActuators(spec)) {
      levels[actuator.id] = actuator.safeLevel;
      why.set(actuator.id, { reason: 'safe-state', detail });
      forceRelayMemory(next, actuator, actuator.safeLevel, nowMs);
    }
    next.regulating = false;
    next.output = 0;
    next.hysteresisOn = { raise: false, lower: false };
  } else if (verdict.ok) {
    const output = controllerOutput(spec, desired, observed, verdict.value, next, nowMs);
    next.output = output;
    next.regulating = true;
    const duties = splitRange(spec, output, next, nowMs, wakeTimes);
    for (const { direction, actuator } of loopActuators(spec)) {
      const duty = duties[direction];
      levels[actuator.id] = actuatorLevel(actuator, duty, next, nowMs, spec.controller.type, wakeTimes);
      if (levels[actuator.id]! > 0) next.lastActiveMs = { ...next.lastActiveMs, [direction]: nowMs };
      why.set(actuator.id, { reason: 'regulate', detail: `output ${formatOutput(output)}` });
    }
  }

  const commands: ActuatorCommand[] = [];
  let allConfirmed = true;
  for (const { actuator } of loopActuators(spec)) {
    const decision = decideCommand(
      actuator.id,
      levels[actuator.id]!,
      observed.actuators[actuator.id],
      memory.commands[actuator.id],
      nowMs,
      spec,
      why.get(actuator.id)!,
    );
    next.commands[actuator.id] = decision.memory;
    if (decision.command) commands.push(decision.command);
    if (!decision.confirmed) allConfirmed = false;
    wakeTimes.push(decision.nextWakeMs);
  }

  const status = buildStatus(spec, desired, observed, verdict, next, levels, allConfirmed, nowMs);
  next.conditions = status.conditions;
  const future = wakeTimes.filter((t) => Number.isFinite(t));
  return {
    wanted: levels,
    commands,
    memory: next,
    status,
    nextWakeMs: future.length > 0 ? Math.max(nowMs, Math.min(...future)) : nowMs + spec.keepAliveMs,
  };
}

/** Signed output: positive raises the quantity, negative lowers it. Updates controller memory. */
function controllerOutput(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  measured: number,
  next: LoopMemory,
  nowMs: number,
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
    const actual = actualSignedOutput(spec, observed);
    next.pid = pidInitialMemory(Math.min(outputMax, Math.max(outputMin, actual)));
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

/**
 * Splits the signed output between the raise and lower actuators. They are never both above
 * 0, and one direction may start only `changeoverMs` after the other was last active, so a
 * heater and a compressor never fight and the compressor is not started right after heating.
 */
function splitRange(
  spec: LoopSpec,
  output: number,
  next: LoopMemory,
  nowMs: number,
  wakeTimes: number[],
): Record<Direction, number> {
  const wantDirection: Direction | undefined = output > 0 ? 'raise' : output < 0 ? 'lower' : undefined;
  if (wantDirection === undefined) return { raise: 0, lower: 0 };
  const other: Direction = wantDirection === 'raise' ? 'lower' : 'raise';
  const otherActiveMs = next.lastActiveMs[other];
  const hasOther = other === 'raise' ? spec.raise !== undefined : spec.lower !== undefined;
  if (hasOther && otherActiveMs !== undefined && nowMs - otherActiveMs < spec.changeoverMs) {
    wakeTimes.push(otherActiveMs + spec.changeoverMs);
    return { raise: 0, lower: 0 };
  }
  const duty = Math.abs(output);
  return wantDirection === 'raise' ? { raise: duty, lower: 0 } : { raise: 0, lower: duty };
}

/** Level for one actuator: relays through time-proportioning (PID) or minimum times (hysteresis). */
function actuatorLevel(
  actuator: ActuatorSpec,
  duty: number,
  next: LoopMemory,
  nowMs: number,
  controllerType: 'pid' | 'hysteresis',
  wakeTimes: number[],
): number {
  if (actuator.kind === 'continuous') return Math.round(duty * 1000) / 1000;
  const params = actuator.timeProportioning ?? { windowMs: 600_000, minOnMs: 0, minOffMs: 0 };
  const memory = next.relays[actuator.id] ?? timeProportioningInitialMemory();
  if (controllerType === 'pid') {
    const result = timeProportion(duty, memory, nowMs, params);
    next.relays[actuator.id] = result.memory;
    wakeTimes.push(result.nextChangeMs);
    return result.on ? 1 : 0;
  }
  const held = holdForMinimumTimes(duty > 0, memory.isOn, memory.lastSwitchMs, nowMs, params);
  if (held.untilMs !== undefined) wakeTimes.push(held.untilMs);
  next.relays[actuator.id] = switchedRelayMemory(memory, held.on, nowMs);
  return held.on ? 1 : 0;
}

/** Safe state overrides minimum on times: record the switch so minimum off times still hold. */
function forceRelayMemory(next: LoopMemory, actuator: ActuatorSpec, level: number, nowMs: number): void {
  if (actuator.kind !== 'relay') return;
  const memory = next.relays[actuator.id] ?? timeProportioningInitialMemory();
  next.relays[actuator.id] = switchedRelayMemory(memory, level > 0, nowMs);
}

function switchedRelayMemory(
  memory: TimeProportioningMemory,
  on: boolean,
  nowMs: number,
): TimeProportioningMemory {
  if (memory.isOn === on) return memory;
  return { ...memory, isOn: on, lastSwitchMs: nowMs, pulseEnded: !on };
}

function formatOutput(output: number): string {
  return `${Math.round(output * 1000) / 10} %`;
}

function buildStatus(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  verdict: ReadingVerdict,
  next: LoopMemory,
  levels: Record<string, number>,
  allConfirmed: boolean,
  nowMs: number,
): LoopStatus {
  const measured = verdict.ok ? verdict.value : undefined;
  const raiseOn = spec.raise !== undefined && (levels[spec.raise.id] ?? 0) > 0;
  const lowerOn = spec.lower !== undefined && (levels[spec.lower.id] ?? 0) > 0;
  return {
    loop: spec.id,
    quantity: spec.quantity,
    mode: desired.mode,
    setpoint: desired.setpoint,
    measured,
    measuredAtMs: observed.reading?.atMs,
    output: next.output,
    action: actionFor(spec, desired.mode, raiseOn, lowerOn),
    generation: desired.generation,
    observedGeneration: desired.generation,
    actuators: Object.fromEntries(
      loopActuators(spec).map(({ actuator }) => [
        actuator.id,
        { wanted: levels[actuator.id]!, observed: observed.actuators[actuator.id] ?? null },
      ]),
    ),
    conditions: statusConditions({
      previous: next.conditions,
      verdict,
      mode: desired.mode,
      measured,
      setpoint: desired.setpoint,
      convergedBand: spec.convergedBand,
      allConfirmed,
      generation: desired.generation,
      nowMs,
    }),
    updatedAtMs: nowMs,
  };
}

function actionFor(spec: LoopSpec, mode: Mode, raiseOn: boolean, lowerOn: boolean): LoopStatus['action'] {
  if (mode === 'off') return 'off';
  const humidity = spec.quantity === 'humidity';
  if (raiseOn) return humidity ? 'humidifying' : 'heating';
  if (lowerOn) return humidity ? 'drying' : 'cooling';
  return 'idle';
}
