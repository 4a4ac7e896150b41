import { type AutotuneInput, type AutotuneMemory, isActive, movesUp } from './autotune-memory.js';

/**
 * How an autotune ends early: the reasons checked before each step (a changed desired state, a
 * sensor problem, the time and cycle limits, a setpoint the value never reaches), a person's
 * cancel between cycles, and the abort itself, which drops the record.
 */

/** A run that has not settled after this many cycles is aborted (keeps the record bounded too). */
export const MAX_CYCLES = 20;
/**
 * Setpoint unreachable: the value has not moved a band towards the next switch point for this
 * long, and for at least as long as its progress so far took. Longer than any dead time of a
 * plant worth a relay experiment; the "as long as" part lets a slow plant take its time.
 */
export const STALL_MIN_MS = 30 * 60_000;

/** Why the run must end before this step, or undefined when it may go on. */
export function abortReason(memory: AutotuneMemory, input: AutotuneInput, nowMs: number): string | undefined {
  if (memory.pendingAbort !== undefined) return memory.pendingAbort;
  if (input.interrupted !== undefined) return input.interrupted;
  if (input.mode !== memory.mode) return `mode changed from ${memory.mode} to ${input.mode}`;
  if (input.setpoint !== memory.setpoint)
    return `setpoint changed from ${memory.setpoint} to ${input.setpoint}`;
  if (input.sensorProblem !== undefined) return `sensor: ${input.sensorProblem}`;
  if (input.reading === undefined) return 'sensor: no reading';
  if (!Number.isFinite(input.reading.value)) return `sensor: reading is ${input.reading.value}`;
  if (nowMs - memory.startedAtMs > memory.maxDurationMs) {
    return `time limit of ${hours(memory.maxDurationMs)} reached after ${memory.cycles} cycles without a steady oscillation`;
  }
  if (memory.cycles > MAX_CYCLES) return `no steady oscillation after ${MAX_CYCLES} cycles`;
  const a = memory.approach;
  if (a && nowMs - a.bestAtMs > Math.max(STALL_MIN_MS, a.bestAtMs - a.sinceMs)) {
    const up = movesUp(memory);
    const towards = up ? 'rise above' : 'fall below';
    const edge = memory.setpoint + (up ? 1 : -1) * (memory.hysteresis ?? 0);
    const at = memory.level === memory.highLevel ? 'full output' : 'the output at its low level';
    return `setpoint unreachable: with ${at} the value did not ${towards} ${round(edge)} (it stays near ${round(a.best)} after ${minutes(nowMs - a.sinceMs)})`;
  }
  return undefined;
}

/**
 * Asks a running autotune to end with `reason` at its next step (or the next cycle that holds the
 * loop safe): a cancel between cycles then ends like an abort inside one. The first reason wins.
 */
export function requestAbort(memory: AutotuneMemory, reason: string): AutotuneMemory {
  if (!isActive(memory) || memory.pendingAbort !== undefined) return memory;
  return { ...memory, pendingAbort: reason };
}

/** Ends a run with a reason (a restart, a fault, a pending abort): the record is dropped. */
export function abortAutotune(memory: AutotuneMemory, reason: string, nowMs: number): AutotuneMemory {
  if (!isActive(memory)) return memory;
  const { approach: _a, pendingAbort: _p, ...rest } = memory;
  return { ...rest, phase: 'aborted', abortReason: reason, endedAtMs: nowMs, samples: [], switches: [] };
}

/** A value in a reason: two decimals. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function hours(ms: number): string {
  return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
}

function minutes(ms: number): string {
  return `${Math.round(ms / 60_000)} min`;
}
