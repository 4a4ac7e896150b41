import type { Direction } from '../types.js';
import { type AutotuneMemory, type AutotunePhase, isActive } from './autotune-memory.js';

/** A run's progress as the status shows it: cycles done and the time expected to be left. */

/** Progress for the status. */
export interface AutotuneProgress {
  phase: AutotunePhase;
  side: Direction;
  cycles: number;
  cyclesNeeded: number;
  elapsedMs: number;
  /** Expected time left from the last period; else the time left to the limit. */
  remainingMs: number;
  remainingIsLimit: boolean;
  noiseSigma?: number;
  hysteresis?: number;
}

export function autotuneProgress(memory: AutotuneMemory, nowMs: number): AutotuneProgress {
  const elapsedMs = (memory.endedAtMs ?? nowMs) - memory.startedAtMs;
  const needed = 1 + memory.cyclesNeeded;
  const limitLeftMs = Math.max(0, memory.maxDurationMs - elapsedMs);
  const lastHigh = lastHighSwitchMs(memory);
  const estimate =
    memory.lastPeriodS !== undefined && lastHigh !== undefined
      ? Math.max(0, (needed - memory.cycles) * memory.lastPeriodS * 1000 - (elapsedMs - lastHigh))
      : undefined;
  const ended = !isActive(memory);
  return {
    phase: memory.phase,
    side: memory.side,
    cycles: memory.cycles,
    cyclesNeeded: needed,
    elapsedMs,
    remainingMs: ended ? 0 : Math.min(estimate ?? limitLeftMs, limitLeftMs),
    remainingIsLimit: !ended && estimate === undefined,
    ...(memory.noise ? { noiseSigma: memory.noise.sigma } : {}),
    ...(memory.hysteresis === undefined ? {} : { hysteresis: memory.hysteresis }),
  };
}

function lastHighSwitchMs(memory: AutotuneMemory): number | undefined {
  for (let i = memory.switches.length - 1; i >= 0; i--) {
    if (memory.switches[i]![1] === memory.highLevel) return memory.switches[i]![0];
  }
  return undefined;
}
