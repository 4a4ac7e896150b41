/**
 * The peers' relay autotunes, re-enacted on the simulated plant with their own relay, stop
 * rule and Ziegler–Nichols rule, read from their source:
 *
 * ESPHome climate.pid (esphome/components/pid/pid_autotuner.cpp, .h, climate.py)
 *   relay on the error e = setpoint − value: output_positive (1) once e > noiseband, output_negative
 *   (0 for a heater alone) once e < −noiseband; noiseband default 0.25. Period: the intervals
 *   between crossings of ±noiseband/4 by e, mean × 2. Amplitude: the extremes of e in each
 *   relay phase (the last 7 kept), mean of |max[i] − min[i+1]| for i = 1 … n−2, halved.
 *   Ends once it has 2 crossing intervals and 3 phase minima and maxima (when the crossings are
 *   not symmetrical it waits only when `enough_data_phase_` was already set, which it is not the
 *   first time: so in effect it ends at once). Ku = 4d / (π·a) with d = (positive − negative) / 2,
 *   Pu the period; "Ziegler-Nichols PID": kp 0.6 Ku, ki 1.2 Ku / Pu, kd 0.075 Ku·Pu.
 * Klipper PID_CALIBRATE (klippy/extras/pid_calibrate.py)
 *   full power until the value reaches the target, then off until it falls to target − 5
 *   (TUNE_PID_DELTA 5.0, whatever the unit), recording the extreme of each phase as a peak; ends
 *   with 12 peaks and the heater off. For each peak from the 5th: Tu = t[i] − t[i−2], and the
 *   one with the median Tu gives a = |peak[i] − peak[i−1]| / 2, Ku = 4·max_power / (π·a) (d the
 *   whole power, twice ESPHome's d for the same relay), then kp 0.6 Ku, Ti 0.5 Tu, Td 0.125 Tu
 *   (Klipper's gains are ×255 in its config and divided by PID_PARAM_BASE 255 again in
 *   ControlPID: in output fractions they are these).
 *
 * Both end as ISA gains for homeostat's PID (kp in output fraction per °C, Ti, Td in s), so the
 * step comparison differs by the tuning only.
 */

import type { TestPlant } from '../../core/tuning/relay-driver.js';
import { restLevel, SAMPLE_S, simPlant, T0_MS } from './autotune-plant.js';

export interface IsaGains {
  kp: number;
  tiS: number;
  tdS: number;
  /** Setpoint weight b (pid.ts); absent: 1, as the peers run it. */
  setpointWeight?: number;
}

/** A Ziegler–Nichols-style rule: kp = kpFactor·Ku, Ti = tiFactor·Pu, Td = tdFactor·Pu. */
export interface ZnRule {
  kpFactor: number;
  tiFactor: number;
  tdFactor: number;
}

/**
 * The rules as the peers write them. ESPHome's (0.6, 1.2, 0.075) in kp, ki = 1.2·Ku/Pu,
 * kd = 0.075·Ku·Pu is Ti = 0.6/1.2·Pu = Pu/2 and Td = 0.075/0.6·Pu = Pu/8: Klipper's too.
 */
export const ZN_PID: ZnRule = { kpFactor: 0.6, tiFactor: 0.5, tdFactor: 0.125 };

/** ESPHome's factors (kp, ki, kd per Ku, Ku/Pu, Ku·Pu) as an ISA rule. */
export function ruleFromEsphomeFactors(kp: number, ki: number, kd: number): ZnRule {
  return { kpFactor: kp, tiFactor: kp / ki, tdFactor: kd / kp };
}

export function znGains(ultimateGain: number, ultimatePeriodS: number, rule: ZnRule = ZN_PID): IsaGains {
  return {
    kp: rule.kpFactor * ultimateGain,
    tiS: rule.tiFactor * ultimatePeriodS,
    tdS: rule.tdFactor * ultimatePeriodS,
  };
}

/** Describing-function ultimate gain: Ku = 4d / (π·a), d the relay's half step, a the value's amplitude. */
export function ultimateGain(relayHalfStep: number, amplitude: number): number {
  return (4 * relayHalfStep) / (Math.PI * amplitude);
}

export interface PeerTune {
  peer: 'ESPHome' | 'Klipper';
  ultimateGain: number;
  ultimatePeriodS: number;
  /** Half the peak-to-peak the peer measured, °C. */
  amplitude: number;
  gains: IsaGains;
  durationMs: number;
  /** Relay switches the run made. */
  switches: number;
}

/** ESPHome's `noiseband` default (climate.py). */
export const ESPHOME_NOISEBAND = 0.25;
/** Klipper's TUNE_PID_DELTA. */
export const KLIPPER_DELTA = 5;

/** A run that has not ended after this many (τ + θ) is reported as such. */
const LIMIT_TIME_CONSTANTS = 200;

/** ESPHome climate.pid autotune from the plant at rest at its setpoint (its relay levels 1 and 0). */
export function esphomeTune(plant: TestPlant, seed: number): PeerTune {
  const sim = simPlant(plant, restLevel(plant), seed);
  const noiseband = ESPHOME_NOISEBAND;
  const zcBand = noiseband / 4;
  let relay: 'init' | 'pos' | 'neg' = 'init';
  let zc: 'init' | 'pos' | 'neg' = 'init';
  let lastCrossMs: number | undefined;
  const intervalsMs: number[] = [];
  const maxs: number[] = [];
  const mins: number[] = [];
  let phaseMin = 0;
  let phaseMax = 0;
  let lastRelay: 'init' | 'pos' | 'neg' = 'init';
  let switches = 0;
  const limitS = LIMIT_TIME_CONSTANTS * (plant.timeConstantS + plant.deadTimeS);
  for (let tS = 0; tS < limitS; tS += SAMPLE_S) {
    const atMs = T0_MS + tS * 1000;
    const error = plant.setpoint - sim.read(atMs);
    // RelayFunction::update
    if (relay === 'init') relay = error > noiseband ? 'pos' : 'neg';
    if (relay === 'pos' && error < -noiseband) relay = 'neg';
    else if (relay === 'neg' && error > noiseband) relay = 'pos';
    // OscillationFrequencyDetector::update
    if (zc === 'init') zc = error > zcBand ? 'pos' : 'neg';
    let crossed = false;
    if (zc === 'pos' && error < -zcBand) {
      zc = 'neg';
      crossed = true;
    } else if (zc === 'neg' && error > zcBand) {
      zc = 'pos';
      crossed = true;
    }
    if (crossed) {
      if (lastCrossMs !== undefined) intervalsMs.push(atMs - lastCrossMs);
      lastCrossMs = atMs;
    }
    // OscillationAmplitudeDetector::update
    if (relay !== lastRelay) {
      if (lastRelay === 'pos') maxs.push(phaseMax);
      else if (lastRelay === 'neg') mins.push(phaseMin);
      if (lastRelay !== 'init') switches++;
      phaseMin = error;
      phaseMax = error;
    }
    lastRelay = relay;
    phaseMin = Math.min(phaseMin, error);
    phaseMax = Math.max(phaseMax, error);
    if (maxs.length > 7) maxs.shift();
    if (mins.length > 7) mins.shift();
    sim.setLevel(relay === 'pos' ? 1 : 0, atMs);
    if (intervalsMs.length >= 2 && Math.min(mins.length, maxs.length) >= 3) {
      const n = Math.min(mins.length, maxs.length);
      let sum = 0;
      for (let i = 1; i < n - 1; i++) sum += Math.abs(maxs[i]! - mins[i + 1]!);
      const amplitude = sum / (n - 2) / 2;
      const periodS = ((intervalsMs.reduce((a, b) => a + b, 0) / intervalsMs.length) * 2) / 1000;
      const ku = ultimateGain(0.5, amplitude);
      return {
        peer: 'ESPHome',
        ultimateGain: ku,
        ultimatePeriodS: periodS,
        amplitude,
        gains: znGains(ku, periodS, ruleFromEsphomeFactors(0.6, 1.2, 0.075)),
        durationMs: tS * 1000,
        switches,
      };
    }
  }
  throw new Error(`ESPHome autotune on ${plant.id}: no result in ${LIMIT_TIME_CONSTANTS} (τ + θ)`);
}

/** Klipper PID_CALIBRATE with TARGET = the setpoint, from the plant at rest at it (max_power 1). */
export function klipperTune(plant: TestPlant, seed: number): PeerTune {
  const sim = simPlant(plant, restLevel(plant), seed);
  const calibrate = plant.setpoint;
  let target = calibrate;
  let heating = false;
  let peak = 0;
  let peakMs = 0;
  const peaks: [number, number][] = [];
  let switches = 0;
  const limitS = LIMIT_TIME_CONSTANTS * (plant.timeConstantS + plant.deadTimeS);
  for (let tS = 0; tS < limitS; tS += SAMPLE_S) {
    const atMs = T0_MS + tS * 1000;
    const temp = sim.read(atMs);
    const checkPeaks = () => {
      peaks.push([peak, peakMs]);
      peak = heating ? 9999999 : -9999999;
      switches++;
    };
    if (heating && temp >= target) {
      heating = false;
      checkPeaks();
      target = calibrate - KLIPPER_DELTA;
    } else if (!heating && temp <= target) {
      heating = true;
      checkPeaks();
      target = calibrate;
    }
    if (heating) {
      if (temp < peak) [peak, peakMs] = [temp, atMs];
    } else if (temp > peak) [peak, peakMs] = [temp, atMs];
    sim.setLevel(heating ? 1 : 0, atMs);
    if (!heating && peaks.length >= 12) {
      // calc_final_pid: the peak with the median cycle time.
      const cycles: [number, number][] = [];
      for (let pos = 4; pos < peaks.length; pos++) cycles.push([peaks[pos]![1] - peaks[pos - 2]![1], pos]);
      cycles.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const pos = cycles[Math.floor(cycles.length / 2)]![1];
      const amplitude = 0.5 * Math.abs(peaks[pos]![0] - peaks[pos - 1]![0]);
      const periodS = (peaks[pos]![1] - peaks[pos - 2]![1]) / 1000;
      const ku = ultimateGain(1, amplitude); // Klipper: 4·max_power / (π·a)
      return {
        peer: 'Klipper',
        ultimateGain: ku,
        ultimatePeriodS: periodS,
        amplitude,
        gains: znGains(ku, periodS, ZN_PID),
        durationMs: tS * 1000,
        switches,
      };
    }
  }
  throw new Error(`Klipper PID_CALIBRATE on ${plant.id}: no result in ${LIMIT_TIME_CONSTANTS} (τ + θ)`);
}
