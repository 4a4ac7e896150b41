import { abortAutotune, STALL_MIN_MS } from './autotune-abort.js';
import { type AutotuneMemory, autotuneExperiment, isActive, movesUp, relayPhase } from './autotune-memory.js';
import { resultOfRun } from './autotune-result.js';
import { turned } from './autotune-turn.js';
import { analyseRelayOscillation, type OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';

/**
 * The relay phase: the output switches on the reading around the setpoint ± the band, each
 * switch really applied is recorded, and at each new cycle the stop rule decides whether the
 * run is done (the record then fitted: autotune-result.ts).
 */

/** Relative agreement of the last two cycles' period and amplitude. */
export const STEADY_TOLERANCE = 0.15;
const APPLIED_TOLERANCE = 0.002;

/** Relay on the reading, the unreachable watch, and the stop rule at each new cycle. */
export function relayStep(memory: AutotuneMemory, value: number, nowMs: number): AutotuneMemory {
  const h = memory.hysteresis!;
  const high = memory.level === memory.highLevel;
  const rising = movesUp(memory);
  // The first switch to high waits for the step depth (a deeper first step carries the gain).
  const firstHigh = !high && !relayPhase(memory).some(([, level]) => level === memory.highLevel);
  const reach = firstHigh ? Math.max(h, memory.stepDepth ?? h) : h;
  const crossed =
    (rising ? value > memory.setpoint + reach : value < memory.setpoint - reach) &&
    (!firstHigh || turned(memory));
  if (crossed) {
    const level = high ? memory.lowLevel : memory.highLevel;
    const switched = noteAppliedLevel({ ...memory, level }, level, nowMs);
    const { approach: _reset, ...rest } = switched;
    return isActive(rest) ? { ...rest, approach: { sinceMs: nowMs, best: value, bestAtMs: nowMs } } : rest;
  }
  const a = memory.approach ?? { sinceMs: nowMs, best: value, bestAtMs: nowMs };
  const better = rising ? value >= a.best + h : value <= a.best - h;
  // After a switch the value goes on the old way for a dead time: progress counts from where
  // it turns. Only for STALL_MIN_MS: a value that never turns (ambient above the setpoint with
  // the heater off) is a setpoint that cannot be reached.
  const away = rising ? value < a.best : value > a.best;
  const turning = away && nowMs - a.sinceMs < STALL_MIN_MS;
  return { ...memory, approach: better || turning ? { ...a, best: value, bestAtMs: nowMs } : a };
}

/**
 * The level really applied this cycle (after minimum on/off times), for the record: a switch the
 * machine wanted but the relay's minimum time held back is recorded when it happens.
 */
export function noteAppliedLevel(memory: AutotuneMemory, level: number, nowMs: number): AutotuneMemory {
  if (!isActive(memory)) return memory;
  // A driver's rounding (a continuous level to 0.001) is the level the machine asked for.
  const applied = Math.abs(level - memory.level) < APPLIED_TOLERANCE ? memory.level : level;
  const switches = [...memory.switches];
  const tMs = nowMs - memory.startedAtMs;
  const current = () => switches[switches.length - 1]?.[1] ?? memory.initialLevel;
  if (current() === applied) return memory;
  const last = switches[switches.length - 1];
  if (last !== undefined && last[0] === tMs) switches.pop();
  if (current() !== applied) switches.push([tMs, applied]);
  const recorded = { ...memory, switches };
  // A switch to high ends a cycle: whether the run is done is decided on the switch really
  // made (a minimum off time may have held it back since the crossing).
  const newHigh = switches[switches.length - 1]?.[0] === tMs && applied === memory.highLevel;
  return newHigh && memory.phase === 'relay' ? completeCycle(recorded, nowMs) : recorded;
}

/** After a switch to high: the cycle count, and done once the last cycles agree. */
function completeCycle(memory: AutotuneMemory, nowMs: number): AutotuneMemory {
  const highs = relayPhase(memory).filter(([, level]) => level === memory.highLevel);
  if (highs.length < 2) return memory;
  const lastPeriodS = (highs[highs.length - 1]![0] - highs[highs.length - 2]![0]) / 1000;
  const cycles = highs.length - 1;
  const counted = { ...memory, cycles, lastPeriodS };
  if (cycles < 1 + memory.cyclesNeeded) return counted;
  const experiment = autotuneExperiment(counted);
  // Cycles from the relay's own switches: a relay that a minimum on time held on at the start
  // is in the record (the plant saw it) but is no cycle.
  const cyclesOnly = {
    ...experiment,
    switches: relayPhase(counted).map(([tMs, level]) => ({ tMs: counted.startedAtMs + tMs, level })),
  };
  const check = analyseRelayOscillation(cyclesOnly, { cycles: 1, tolerance: STEADY_TOLERANCE });
  if (check.state !== 'steady') return counted;
  return finish(
    counted,
    experiment,
    analyseRelayOscillation(cyclesOnly, { cycles: memory.cyclesNeeded }),
    nowMs,
  );
}

/** The steady record to a result (done), or to an abort when its model is refused. */
function finish(
  memory: AutotuneMemory,
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  nowMs: number,
): AutotuneMemory {
  const run = resultOfRun(memory, experiment, analysis, nowMs);
  if (!run.ok) return abortAutotune(memory, run.reason, nowMs);
  const { approach: _a, ...rest } = memory;
  return { ...rest, phase: 'done', endedAtMs: nowMs, result: run.result, samples: [], switches: [] };
}
