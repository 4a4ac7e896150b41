import {
  actuatorLevel,
  forceRelayMemory,
  holdRelayOff,
  restartRelayWindows,
  splitRange,
} from './actuation.js';
import { type ActuatorCommand, decideCommand } from './command.js';
import { controllerOutput } from './controller-output.js';
import { watchEffect } from './effect-watch.js';
import { trippedInterlock } from './interlock.js';
import { type LoopSpec, loopActuators } from './loop-spec.js';
import { clampMemoryToNow, type LoopDesired, type LoopMemory, type LoopObserved } from './loop-state.js';
import { idleSafetyMemory, safetyMonitors } from './safety-monitors.js';
import { judgeReading, type ReadingVerdict } from './sensor-health.js';
import { type LoopStatus, statusConditions } from './status.js';
import type { Mode } from './types.js';

export type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
export { initialLoopMemory } from './loop-state.js';

/**
 * reconcile(spec, desired, observed, memory, now) → wanted levels, commands, new memory,
 * status and next wake-up. Pure: the whole decision of one loop cycle, from its full inputs.
 *
 * Order of precedence (safety first):
 *   1. mode off                         → every actuator at its safe level, at once
 *   2. reading missing/stale/NaN/absurd → every actuator at its safe level, at once
 *   3. a latched fault (effect watch, safety monitors) → every actuator safe until reset
 *   4. otherwise regulate: controller output (−1..1, sign = direction) → split range with a
 *      changeover delay → time-proportioning for relays (minimum on/off times) → levels.
 * Then the safety monitors (safety-monitors.ts) check the levels chosen: a start beyond a
 * relay's cap is held back, and a cut-off, a stuck or runaway value or an on-time limit latches
 * a fault that takes every actuator safe in this same cycle.
 * Then each actuator is commanded only if its observed level differs (idempotent act).
 */

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

export function reconcile(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  memory: LoopMemory,
  nowMs: number,
): ReconcileResult {
  const verdict = judgeReading(observed.reading, nowMs, spec);
  const interlock = trippedInterlock(spec, observed.interlocks, nowMs);
  const latched = memory.latchedFault;
  const regulate = desired.mode !== 'off' && verdict.ok && interlock === undefined && latched === undefined;
  const wakeTimes: number[] = [];
  if (observed.reading && verdict.ok) wakeTimes.push(observed.reading.atMs + spec.staleAfterMs + 1);

  memory = clampMemoryToNow(memory, nowMs);
  const next: LoopMemory = { ...memory, relays: { ...memory.relays }, commands: { ...memory.commands } };
  const levels: Record<string, number> = {};
  const why = new Map<string, { reason: 'regulate' | 'safe-state'; detail: string }>();

  const goSafe = (detail: string) => {
    for (const { actuator } of loopActuators(spec)) {
      levels[actuator.id] = actuator.safeLevel;
      why.set(actuator.id, { reason: 'safe-state', detail });
      forceRelayMemory(next, actuator, actuator.safeLevel, nowMs);
    }
    next.regulating = false;
    next.output = 0;
    next.hysteresisOn = { raise: false, lower: false };
    delete next.effectWatch;
    const idle = idleSafetyMemory(next.safety);
    if (idle) next.safety = idle;
    else delete next.safety;
  };

  if (!regulate) {
    goSafe(
      latched
        ? `latched fault ${latched.reason}`
        : desired.mode === 'off'
          ? 'mode off'
          : !verdict.ok
            ? `sensor ${verdict.reason}`
            : (interlock?.message ?? 'paused'),
    );
  } else if (verdict.ok) {
    if (!memory.regulating) restartRelayWindows(spec, next);
    const output = controllerOutput(spec, desired, observed, verdict.value, next);
    next.output = output;
    next.regulating = true;
    const watched = spec.effectWatch
      ? watchEffect(
          spec.effectWatch,
          next.effectWatch,
          output,
          verdict.value,
          desired.setpoint,
          nowMs,
          spec.quantity === 'temperature' ? 'temperature' : 'other',
        )
      : { watch: undefined };
    if (watched.watch) {
      next.effectWatch = watched.watch;
      wakeTimes.push(watched.watch.sinceMs + spec.effectWatch!.periodMs);
    } else delete next.effectWatch;
    if (watched.fault) next.latchedFault = watched.fault;
  }
  if (next.latchedFault && !latched) {
    // Latched this cycle: safe at once, not at the next one.
    goSafe(`latched fault ${next.latchedFault.reason}`);
  } else if (regulate && verdict.ok) {
    const output = next.output;
    const duties = splitRange(spec, output, next, nowMs, wakeTimes);
    // The idle direction first: a relay its minimum on time still holds on keeps the other
    // direction off (its release time is already a wake time), so the two never both run.
    const idleFirst = loopActuators(spec).sort((a, b) => duties[a.direction] - duties[b.direction]);
    const computed: Record<string, number> = {};
    for (const { direction, actuator } of idleFirst) {
      const opposite = direction === 'raise' ? spec.lower : spec.raise;
      const oppositeOn = opposite !== undefined && (computed[opposite.id] ?? 0) > 0;
      const duty = oppositeOn ? 0 : duties[direction];
      computed[actuator.id] = actuatorLevel(actuator, duty, next, nowMs, spec.controller.type, wakeTimes);
      why.set(actuator.id, { reason: 'regulate', detail: `output ${formatOutput(output)}` });
    }
    for (const { actuator } of loopActuators(spec)) levels[actuator.id] = computed[actuator.id]!;
  }
  // The safety monitors check whatever levels were chosen (skipped in a cycle the effect watch
  // latched: already safe).
  if (next.latchedFault === latched) {
    const monitored = safetyMonitors(
      spec,
      memory.safety,
      {
        value: verdict.ok ? verdict.value : undefined,
        setpoint: desired.setpoint,
        regulating: next.regulating,
        output: next.output,
        levels,
        observed: observed.actuators,
        lastCommanded: memory.commands,
        convergedBand: spec.convergedBand,
      },
      nowMs,
    );
    if (monitored.memory) next.safety = monitored.memory;
    else delete next.safety;
    wakeTimes.push(...monitored.wakeTimes);
    for (const [id, detail] of Object.entries(monitored.heldOff)) {
      levels[id] = 0;
      holdRelayOff(next, memory, id);
      why.set(id, { reason: 'regulate', detail });
    }
    if (monitored.fault && !next.latchedFault) {
      next.latchedFault = monitored.fault;
      // Latched this cycle: safe at once, not at the next one.
      goSafe(`latched fault ${monitored.fault.reason}`);
    }
  }
  for (const { direction, actuator } of loopActuators(spec)) {
    // Active until now if on now or on until this cycle (an actuator holds its level between
    // cycles): the changeover delay counts from when it goes idle, not from when it was last seen on.
    const wasOn = (memory.commands[actuator.id]?.level ?? 0) > 0;
    if (levels[actuator.id]! > 0 || wasOn) next.lastActiveMs = { ...next.lastActiveMs, [direction]: nowMs };
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

  const status = buildStatus(spec, desired, observed, verdict, next, levels, allConfirmed, nowMs, interlock);
  next.conditions = status.conditions;
  const future = wakeTimes.filter((t) => Number.isFinite(t));
  return {
    wanted: levels,
    commands,
    memory: next,
    status,
    // Rounded up to whole ms so a wake-up is never a hair before the moment it waits for.
    nextWakeMs: Math.ceil(
      future.length > 0 ? Math.max(nowMs, Math.min(...future)) : nowMs + spec.keepAliveMs,
    ),
  };
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
  interlock: { message: string } | undefined,
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
      ...(spec.interlocks?.length ? { interlock: interlock?.message ?? null } : {}),
      ...(next.latchedFault ? { latched: next.latchedFault } : {}),
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
