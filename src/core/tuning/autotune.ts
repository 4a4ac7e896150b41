import { abortAutotune, abortReason } from './autotune-abort.js';
import {
  type AutotuneInput,
  type AutotuneMemory,
  type AutotuneStep,
  isActive,
  record,
} from './autotune-memory.js';
import { endNoisePhase } from './autotune-noise-phase.js';
import { relayStep } from './autotune-relay-phase.js';
import { watchTurn } from './autotune-turn.js';

/**
 * Relay autotune (Åström–Hägglund) as a pure state machine: start → noise → relay → done, or
 * aborted with a reason a person can read. Each step takes the latest reading and the loop's
 * desired state with `nowMs`, and returns the level for the tuned actuator; everything it
 * remembers is plain JSON (the loop's memory is persisted), with the record capped.
 *
 * noise  The output is held (a relay at its low level, a continuous actuator where it is) for
 *        NOISE_READINGS readings; σ and the quantum of the detrended readings size the band:
 *        h = max(3σ, 1 quantum, minHysteresis). A reading jumps across a band of 2h by noise
 *        alone only when two readings differ by 6σ = 4.2σ of a difference: p ≈ 1e-5 a reading,
 *        so the relay switches on the plant, not on noise. The quantum: a DS18B20 that reads
 *        the same value 12 times has σ 0, and a band under one step would switch on its LSB.
 * relay  Output at `high` below setpoint − h, at `low` above setpoint + h (the other way round
 *        for the lower side). A cycle runs from one switch to high to the next.
 *        The first switch to high waits until the value is `stepDepth` below the setpoint
 *        (STEP_DEPTH_BANDS): that first step carries the static gain (see there,
 *        autotune-noise-phase.ts).
 * done   Once 2 full cycles after the first (the open-loop step, never counted) agree in period
 *        and amplitude within STEADY_TOLERANCE, the whole record, the held start included, is
 *        fitted (identify-half-rule.ts: a second-order fit reduced by Skogestad's half rule),
 *        which gives SIMC gains and a relay modulation (modulation.ts).
 *
 * Why 2 cycles and not 3 + 3 (relay-analysis.ts' default): a FOPDT plant under a relay is on
 * its limit cycle from the second cycle on (its state is the value and the dead time's
 * content, both the same at each switch), and the fit uses every sample, not the cycles'
 * means. Measured on the five benchmark plants (σ 0.05, quantum 0.0625, a reading every
 * 5 s, seeds 1–5, test/core/tuning/autotune.test.ts): K, τ, θ within 7 % of the true (half
 * rule) values, in 0.6–2.9 (τ + θ) on the four lag-dominated plants and 5.6 on the kettle,
 * whose relay period is longest against τ + θ (it needed 12.3 with 3 + 3 cycles).
 * The agreement check still catches a plant that has not settled (a load changing).
 *
 * The duration is counted from the start (the held noise phase included). The normal start is
 * a loop regulating near its setpoint; from far below (ambient) the approach is part of the run
 * and of the record (a larger step, a better gain estimate), and may take longer.
 *
 * This module is the machine (one step) and the public face; the parts live beside it: the
 * start (autotune-start.ts), the memory and its record (autotune-memory.ts), the noise and
 * relay phases (autotune-noise-phase.ts, autotune-relay-phase.ts), a regulating relay's turn
 * (autotune-turn.ts), the aborts (autotune-abort.ts) and the progress (autotune-progress.ts).
 */

export { abortAutotune, MAX_CYCLES, requestAbort, STALL_MIN_MS } from './autotune-abort.js';
export {
  type AutotuneInput,
  type AutotuneMemory,
  type AutotunePhase,
  type AutotuneStep,
  autotuneExperiment,
  isActive,
  MAX_SAMPLES,
} from './autotune-memory.js';
export {
  MAX_HYSTERESIS,
  MAX_STEP_DEPTH,
  NOISE_READINGS,
  STEP_DEPTH_BANDS,
} from './autotune-noise-phase.js';
export { type AutotuneProgress, autotuneProgress } from './autotune-progress.js';
export { noteAppliedLevel, STEADY_TOLERANCE } from './autotune-relay-phase.js';
export type { AutotuneResult } from './autotune-result.js';
export {
  type AutotuneOptions,
  type AutotuneStart,
  type AutotuneStartInput,
  CYCLES_NEEDED,
  DEFAULT_MAX_DURATION_MS,
  startAutotune,
} from './autotune-start.js';
export { FLAT_MS, TURN_BANDS } from './autotune-turn.js';

export function stepAutotune(memory: AutotuneMemory, input: AutotuneInput, nowMs: number): AutotuneStep {
  if (!isActive(memory)) return { memory };
  const reason = abortReason(memory, input, nowMs);
  if (reason !== undefined) return { memory: abortAutotune(memory, reason, nowMs) };
  const reading = input.reading!;
  let next = memory;
  if (memory.lastReadingAtMs === undefined || reading.atMs > memory.lastReadingAtMs) {
    next = watchTurn(record(memory, reading), reading.value);
    next = next.phase === 'noise' ? endNoisePhase(next, nowMs) : relayStep(next, reading.value, nowMs);
  }
  if (!isActive(next)) return { memory: next };
  return { memory: next, level: next.level };
}
