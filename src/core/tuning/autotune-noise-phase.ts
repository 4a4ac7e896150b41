import { abortAutotune, round } from './autotune-abort.js';
import { type AutotuneMemory, autotuneExperiment, pushesUp } from './autotune-memory.js';
import { noteAppliedLevel } from './autotune-relay-phase.js';
import { estimateNoise } from './noise.js';

/**
 * The noise phase: the output held while NOISE_READINGS readings size the relay's band from the
 * sensor's noise and quantum; then the relay starts (or the run is refused as too noisy).
 */

/**
 * Default depth of the first step, in bands. Started at rest at the setpoint, a relay around it
 * shows K/τ and θ but hardly K and τ apart: the value moves a few bands while the distance to
 * ambient (which sets the curvature, 1/τ) is tens of them, so K and τ come out up to 80 % off
 * together (measured, slow greenhouse). Holding the output low until the value is 10 bands
 * (≈ 1.5 °C with σ 0.05) below the setpoint first gives a step whose curvature carries them:
 * within 12 % on the four FOPDT plants (1 °C: within 12 %; 2 °C: within 6 %).
 */
export const STEP_DEPTH_BANDS = 10;
/**
 * The deepest first step, loop unit (°C; loop-autotune.ts scales it for other quantities): the actuator is held low until the value is this far past
 * the setpoint, however noisy the sensor. A fridge at 4 °C with a probe of σ 0.5 would otherwise
 * wait for 19.6 °C with its compressor off (10 bands of 1.56).
 */
export const MAX_STEP_DEPTH = 2;
/**
 * The widest relay band, loop unit: a sensor noisier than this needs (σ above 1/3) cannot give a
 * useful record within a safe swing, and the run is refused after the noise phase.
 */
export const MAX_HYSTERESIS = 1;
/** Readings held for the noise estimate: σ to about ±20 % (χ² with 9 degrees of freedom). */
export const NOISE_READINGS = 12;

/** Once NOISE_READINGS are recorded: the band, the first step's depth, and the relay's start. */
export function endNoisePhase(memory: AutotuneMemory, nowMs: number): AutotuneMemory {
  if (memory.samples.length < NOISE_READINGS) return memory;
  const noise = estimateNoise(autotuneExperiment(memory).samples);
  const hysteresis = Math.max(3 * noise.sigma, noise.quantum, memory.minHysteresis);
  const maxHysteresis = memory.maxHysteresis ?? MAX_HYSTERESIS;
  if (hysteresis > maxHysteresis) {
    return abortAutotune(
      memory,
      `the sensor is too noisy for an autotune: σ ${round(noise.sigma)} (steps of ${round(noise.quantum)}) needs a relay band of ±${round(hysteresis)}, at most ±${round(maxHysteresis)}`,
      nowMs,
    );
  }
  const value = memory.samples[memory.samples.length - 1]![1];
  // The relay starts towards the setpoint: below it a heater goes to high at once (the first
  // cycle starts now), above it to low. A continuous actuator held in between always moves.
  const stepDepth =
    memory.stepDepth ?? Math.min(STEP_DEPTH_BANDS * hysteresis, memory.maxStepDepth ?? MAX_STEP_DEPTH);
  const past = pushesUp(memory) ? value < memory.setpoint - stepDepth : value > memory.setpoint + stepDepth;
  // A regulating relay waits for its turn first (relayStep): it stays low.
  const level = past && memory.turn === undefined ? memory.highLevel : memory.lowLevel;
  const started: AutotuneMemory = {
    ...noteAppliedLevel({ ...memory, level }, level, nowMs),
    phase: 'relay',
    noise,
    hysteresis,
    stepDepth,
    relayStartedAtMs: nowMs,
    approach: { sinceMs: nowMs, best: value, bestAtMs: nowMs },
  };
  return started;
}
