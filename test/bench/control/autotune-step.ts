/**
 * The closed-loop setpoint step of the autotune section: homeostat's PID (`pidStep`, ISA form,
 * derivative on the measurement) with given gains on the simulated plant, through the same
 * sensor as the tunes (noise, quantum, a reading every SAMPLE_S). A continuous actuator takes
 * the PID output as its level; a relay is switched by homeostat's duty band (`dutyBand`) with
 * the bench's minimum on/off times. Only the gains (and the band, kp · band) differ between
 * the runs compared, so the comparison is of the tuning.
 *
 * Timeline: the plant at rest at the setpoint with the holding level, the PID's integrator at
 * that level (a loop that has been regulating), `warmupS` of regulation (a relay finds its
 * cycle, the noise its level), then the setpoint steps by `stepC`; metrics on the true value
 * from the step over `horizonS`, at 1 s.
 */
import { dutyBand } from '../../../src/core/duty-band.js';
import { type PidMemory, type PidParams, pidInitialMemory, pidStep } from '../../../src/core/pid.js';
import { timeProportion, timeProportioningInitialMemory } from '../../../src/core/time-proportioning.js';
import type { TestPlant } from '../../core/tuning/relay-driver.js';
import type { IsaGains } from './autotune-peers.js';
import { restLevel, SAMPLE_S, simPlant, T0_MS } from './autotune-plant.js';
import { type RunMetrics, runMetrics } from './metrics.js';

/** Fraction of the horizon (its end) over which the ripple is measured: 2 of 5 (τ + θ). */
export const RIPPLE_FRACTION = 0.4;

/** Relay minimum on and off times, ms (the bench's relay plants use the same, homeostat.ts). */
export const RELAY_MIN_MS = 30_000;

export interface StepSetup {
  plant: TestPlant;
  gains: IsaGains;
  actuator: 'relay' | 'continuous';
  /** Relay only: the duty band's half width in the loop's unit (dutyBand gets kp · band). */
  bandC?: number;
  /**
   * Relay only: time-proportioning with this window instead of the band, s. No minimum on/off
   * times then: the window (≥ 240 s, modulation.ts) already bounds the switching, and 30 s
   * minimum times would turn a 30 s window into whole windows on or off.
   */
  windowS?: number;
  seed: number;
  stepC: number;
  /**
   * A load step at the step time instead of (or beside) the setpoint step, in output
   * fractions (autotune-plant.ts setLoad; −0.1: a loss the output must raise 10 % to cover).
   */
  loadStep?: number;
  warmupS: number;
  horizonS: number;
  /** Settling band, °C. */
  settlingBandC: number;
  /** The trace for the picture starts this long before the step, s (a multiple of SAMPLE_S). */
  preS: number;
}

/** One point every SAMPLE_S: the true value, the reading, the setpoint, the mean level over the period. */
export interface StepTrace {
  /** s from the step (negative before it). */
  tS: number[];
  value: number[];
  measured: number[];
  setpoint: number[];
  level: number[];
}

export interface StepRun {
  metrics: RunMetrics;
  /**
   * Peak-to-peak of the true value over the last RIPPLE_FRACTION of the horizon, when the step
   * has long settled: a relay's ripple (on a continuous actuator, the noise's trace).
   */
  ripplePpC: number;
  /** Largest |setpoint − true value| after the step, °C (a load step's dip). */
  peakDeviationC: number;
  trace: StepTrace;
}

export function runStep(setup: StepSetup): StepRun {
  const { plant, gains, actuator } = setup;
  const hold = restLevel(plant);
  const sim = simPlant(plant, hold, setup.seed);
  const params: PidParams = { ...gains, outputMin: 0, outputMax: 1 };
  let pid: PidMemory = pidInitialMemory(hold);
  let output = hold;
  let relay = { isOn: false } as { isOn: boolean; lastSwitchMs?: number };
  let windowMemory = timeProportioningInitialMemory();
  const windowParams = { windowMs: (setup.windowS ?? 0) * 1000, minOnMs: 0, minOffMs: 0 };
  const halfBand = gains.kp * (setup.bandC ?? 0);
  const stepAtS = setup.warmupS;
  const endS = stepAtS + setup.horizonS;
  const spBefore = plant.setpoint;
  const spAfter = plant.setpoint + setup.stepC;
  const values = new Float64Array(setup.horizonS + 1);
  const levels = new Float64Array(setup.horizonS);
  const trace: StepTrace = { tS: [], value: [], measured: [], setpoint: [], level: [] };
  let levelBefore = hold;
  let levelSum = 0;
  let lastMeasured = plant.setpoint;
  for (let s = 0; s <= endS; s++) {
    const atMs = T0_MS + s * 1000;
    const setpoint = s >= stepAtS ? spAfter : spBefore;
    if (s === stepAtS && setup.loadStep !== undefined) sim.setLoad(setup.loadStep, atMs);
    const value = sim.valueAt(atMs);
    if (s % SAMPLE_S === 0) {
      lastMeasured = sim.read(atMs);
      const result = pidStep(params, pid, { setpoint, measured: lastMeasured, atMs });
      pid = result.memory;
      output = result.output;
    }
    let level = output;
    if (actuator === 'relay' && setup.windowS !== undefined) {
      const result = timeProportion(output, windowMemory, atMs, windowParams);
      windowMemory = result.memory;
      level = result.on ? 1 : 0;
    } else if (actuator === 'relay') {
      const band = dutyBand(output, relay, atMs, { halfBand, minOnMs: RELAY_MIN_MS, minOffMs: RELAY_MIN_MS });
      relay = band.memory;
      level = band.on ? 1 : 0;
    }
    sim.setLevel(level, atMs);
    if (s === stepAtS) levelBefore = level;
    if (s >= stepAtS) {
      values[s - stepAtS] = value;
      if (s < endS) levels[s - stepAtS] = level;
    }
    if (s > stepAtS - setup.preS - SAMPLE_S) {
      levelSum += level;
      if ((s - stepAtS) % SAMPLE_S === 0) {
        trace.tS.push(s - stepAtS);
        trace.value.push(value);
        trace.measured.push(lastMeasured);
        trace.setpoint.push(setpoint);
        trace.level.push(levelSum / SAMPLE_S);
        levelSum = 0;
      }
    }
  }
  const metrics = runMetrics(
    values,
    levels,
    levelBefore,
    spAfter,
    setup.settlingBandC,
    1,
    actuator === 'relay',
  );
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (let i = Math.floor((1 - RIPPLE_FRACTION) * setup.horizonS); i <= setup.horizonS; i++) {
    low = Math.min(low, values[i]!);
    high = Math.max(high, values[i]!);
  }
  let peakDeviationC = 0;
  for (const value of values) peakDeviationC = Math.max(peakDeviationC, Math.abs(spAfter - value));
  return { metrics, ripplePpC: high - low, peakDeviationC, trace };
}
