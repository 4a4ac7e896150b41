import { regulatedLevels, restartRelayWindows } from './actuation.js';
import { clampMemoryToNow } from './clock-step.js';
import type { ActuatorCommand, WantedWhy } from './command.js';
import { controllerOutput } from './controller-output.js';
import { watchEffect } from './effect-watch.js';
import type { LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { formatPercent } from './numbers.js';
import { commandLevels, markActive, nextWakeMs } from './reconcile-act.js';
import { type Gate, gateCycle, latchedDetail, staleAtMs } from './reconcile-gate.js';
import { type Cycle, holdSafe, monitorLevels, type Stepped } from './reconcile-safety.js';
import type { ReadingVerdict } from './sensor-health.js';
import { type LoopStatus, loopStatus } from './status.js';
import { isActive } from './tuning/autotune.js';
import { type AutotuneCycle, settleAutotune, stepLoopAutotune } from './tuning/loop-autotune.js';

export { initialLoopMemory, type LoopDesired, type LoopMemory, type LoopObserved } from './loop-state.js';
export { cancelLoopAutotune, startLoopAutotune } from './tuning/loop-autotune.js';

/**
 * reconcile(spec, desired, observed, memory, now) → wanted levels, commands, new memory,
 * status and next wake-up. Pure: the whole decision of one loop cycle, from its full inputs.
 *
 * A pipeline of steps, each a function of its inputs and `now` that returns a value:
 *   gate     → may the loop regulate, or why is it held safe (safety first):
 *              1. a latched fault (effect watch, safety monitors) → every actuator safe until reset
 *              2. mode off                                        → every actuator safe, at once
 *              3. reading missing/stale/NaN/absurd                → every actuator safe, at once
 *              4. an interlock tripped                            → every actuator safe, at once
 *   autotune → while a relay autotune runs (tuning/autotune.ts) its relay gives the output
 *              instead of the controller; a mode or setpoint change, its time limit, a
 *              setpoint it cannot reach, or a cancel or clock step asked for between cycles
 *              (pendingAbort) ends it, every actuator safe this cycle
 *   regulate → controller output (−1..1, sign = direction), then the effect watch on it
 *   levels   → split range with a changeover delay → time-proportioning / duty band for relays
 *              (minimum on/off times; the autotune's relay switches at once) → levels; or every
 *              actuator at its safe level
 *   monitor  → the safety monitors check the levels chosen: a start beyond a relay's cap is held
 *              back, and a cut-off, a stuck or runaway value or an on-time limit latches a fault
 *              that takes every actuator safe in this same cycle
 *   settle   → a running autotune in a cycle held safe (any gate reason, a fault just latched)
 *              ends with that reason; else the level applied goes into its record
 *   commands → each actuator is commanded only if its observed level differs (idempotent act)
 *   status   → the loop's status and conditions, and the next wake-up
 *
 * The gate is reconcile-gate.ts, holding safe and the monitors reconcile-safety.ts, the commands
 * and the next wake-up reconcile-act.ts.
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
  const before = clampMemoryToNow(memory, nowMs);
  const gate = gateCycle(spec, desired, observed, before.latchedFault, nowMs);
  const tuning = gate.regulate ? tuneStep(desired, observed, before, nowMs, gate.verdict) : undefined;
  const tuned = tuning ? withTuning(before, tuning) : before;
  const regulated =
    gate.regulate && tuning?.ended !== 'aborted'
      ? regulate(spec, desired, observed, tuned, gate.measured, tuning?.output, nowMs)
      : { memory: tuned, wakeTimes: [] };
  const chosen = chooseLevels(spec, gate, tuning, regulated, nowMs);
  // The safety monitors check whatever levels were chosen, except in a cycle whose latched fault
  // is new: latched by the effect watch (already safe), or re-stamped to now by clampMemoryToNow
  // (stamped ahead of now: the loop is held safe, the monitors run again next cycle).
  const monitored =
    chosen.memory.latchedFault === memory.latchedFault
      ? monitorLevels(spec, desired, observed, gate.verdict, before, chosen, nowMs)
      : chosen;
  const checked = settleTuning(spec, monitored, nowMs);
  const acted = commandLevels(spec, observed, before, checked, nowMs);
  const next: LoopMemory = {
    ...checked.memory,
    lastActiveMs: markActive(spec, before, checked, nowMs),
    commands: acted.memory,
  };
  const status = loopStatus(
    spec,
    desired,
    observed,
    { ...gate, memory: next, levels: checked.levels, allConfirmed: acted.allConfirmed },
    nowMs,
  );
  const wakeTimes = [staleAtMs(spec, observed, gate, nowMs), ...checked.wakeTimes, ...acted.wakeTimes];
  return {
    wanted: checked.levels,
    commands: acted.commands,
    memory: { ...next, conditions: status.conditions },
    status,
    nextWakeMs: nextWakeMs(wakeTimes, nowMs, spec.keepAliveMs),
  };
}

/** Step 1b: a running autotune's step on the gate's good reading (a cycle it holds safe: settleTuning). */
function tuneStep(
  desired: LoopDesired,
  observed: LoopObserved,
  before: LoopMemory,
  nowMs: number,
  verdict: ReadingVerdict,
): AutotuneCycle | undefined {
  if (!isActive(before.autotune)) return undefined;
  return stepLoopAutotune(before.autotune, desired, observed, nowMs, verdict);
}

/**
 * The memory with the autotune's step. A run that just ended hands back to the controller:
 * `regulating` false makes it start from the actuators' real level (bumpless, as after mode
 * off) — at once when the run is done, next cycle after an abort (this cycle is held safe).
 */
function withTuning(before: LoopMemory, tuning: AutotuneCycle): LoopMemory {
  return { ...before, autotune: tuning.autotune, ...(tuning.ended ? { regulating: false } : {}) };
}

/**
 * Step 2: the controller's output for a fresh reading (or the autotune's, `tunedOutput`), and the
 * effect watch on it (which may latch a fault). Regulation resuming restarts the relays' windows.
 * During an autotune the PID's memory is left as it was: it is re-based when the run ends.
 */
function regulate(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  before: LoopMemory,
  measured: number,
  tunedOutput: number | undefined,
  nowMs: number,
): Stepped {
  const control =
    tunedOutput === undefined
      ? controllerOutput(spec, desired, observed, measured, before)
      : { output: tunedOutput, pid: before.pid, hysteresisOn: before.hysteresisOn };
  const watched = spec.effectWatch
    ? watchEffect(
        spec.effectWatch,
        before.effectWatch,
        control.output,
        measured,
        desired.setpoint,
        nowMs,
        spec.quantity === 'temperature' ? 'temperature' : 'other',
      )
    : { watch: undefined };
  const { effectWatch: _previous, ...rest } = before;
  return {
    memory: {
      ...rest,
      relays: before.regulating ? before.relays : restartRelayWindows(spec, before.relays),
      regulating: true,
      output: control.output,
      pid: control.pid,
      hysteresisOn: control.hysteresisOn,
      ...(watched.watch ? { effectWatch: watched.watch } : {}),
      ...(watched.fault ? { latchedFault: watched.fault } : {}),
    },
    wakeTimes: watched.watch && spec.effectWatch ? [watched.watch.sinceMs + spec.effectWatch.periodMs] : [],
  };
}

/**
 * Step 3: levels from the output, or every actuator safe (held by the gate, an autotune that
 * just aborted, or a fault just latched).
 */
function chooseLevels(
  spec: LoopSpec,
  gate: Gate,
  tuning: AutotuneCycle | undefined,
  regulated: Stepped,
  nowMs: number,
): Cycle {
  if (!gate.regulate) return holdSafe(spec, regulated, gate.detail, nowMs);
  if (tuning?.ended === 'aborted') {
    // Safe for this cycle, so an abort is always seen at the actuators; from the next cycle the
    // loop regulates again unless the cause holds it safe by itself (the gate decides that).
    return holdSafe(spec, regulated, `autotune aborted: ${tuning.autotune.abortReason}`, nowMs);
  }
  const { latchedFault, output } = regulated.memory;
  // Latched this cycle: safe at once, not at the next one.
  if (latchedFault) return holdSafe(spec, regulated, latchedDetail(latchedFault), nowMs);
  const relay = tuning?.output !== undefined;
  const chosen = regulatedLevels(spec, regulated.memory, nowMs, relay ? 'direct' : 'modulated');
  const why: WantedWhy = {
    reason: 'regulate',
    detail: relay ? `autotune relay, output ${formatPercent(output)}` : `output ${formatPercent(output)}`,
  };
  return {
    levels: chosen.levels,
    why: Object.fromEntries(Object.keys(chosen.levels).map((id) => [id, why])),
    memory: { ...regulated.memory, relays: chosen.relays },
    wakeTimes: [...regulated.wakeTimes, ...chosen.wakeTimes],
  };
}

/**
 * Step 4b: a running autotune ends in a cycle that held the loop safe (with the reason the
 * actuators were given); else the tuned actuator's level, after minimum times and start caps,
 * goes into its record.
 */
function settleTuning(spec: LoopSpec, cycle: Cycle, nowMs: number): Cycle {
  const autotune = cycle.memory.autotune;
  if (!isActive(autotune)) return cycle;
  const safe = Object.values(cycle.why).find((why) => why.reason === 'safe-state');
  const settled = settleAutotune(
    spec,
    autotune,
    {
      regulating: cycle.memory.regulating,
      levels: cycle.levels,
      ...(safe ? { safeDetail: safe.detail } : {}),
    },
    nowMs,
  );
  return { ...cycle, memory: { ...cycle.memory, autotune: settled } };
}
