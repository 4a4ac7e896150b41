/**
 * Prototype relay modulators for target 5 (relay plants: beat Home Assistant's hysteresis on
 * IAE with no more switches per hour). Each is a pure step function of the PID duty, the
 * latest reading, its memory and the clock, like `timeProportion`; all of them honour minimum
 * on/off times, keep duty 0 steadily off and duty 1 steadily on.
 *
 * Exploration (see test/bench/relay-explore.ts). The one that won, hysteresis on the PID duty,
 * is now src/core/duty-band.ts (config `modulation: band`); `dutyHysteresis` below wraps it. The
 * others stay as the evidence the choice rests on.
 */
import { dutyBand } from '../../../src/core/duty-band.js';
import { holdForMinimumTimes } from '../../../src/core/time-proportioning.js';

/** What a modulator sees on each evaluation (every plant step in the bench). */
export interface RelayInput {
  /** PID output, 0..1. */
  duty: number;
  setpoint: number;
  /** Latest reading and its time; undefined before the first one. */
  measured?: number;
  measuredAtMs?: number;
  nowMs: number;
}

export interface MinTimes {
  /** Shortest on time, ms. */
  minOnMs: number;
  /** Shortest off time, ms. */
  minOffMs: number;
}

/** Common memory: relay state and the last switch (for the minimum times). */
export interface RelayMemory {
  isOn: boolean;
  lastSwitchMs?: number;
  /** Last evaluation, ms (for integrating schemes). */
  lastMs?: number;
}

export interface Modulator<M extends RelayMemory> {
  id: string;
  initial(): M;
  step(input: RelayInput, memory: M): { on: boolean; memory: M };
}

function commit<M extends RelayMemory>(
  memory: M,
  wantOn: boolean,
  nowMs: number,
  times: MinTimes,
  extra: Partial<M>,
): { on: boolean; memory: M } {
  const { on } = holdForMinimumTimes(wantOn, memory.isOn, memory.lastSwitchMs, nowMs, times);
  const switched = on !== memory.isOn;
  const next = { ...memory, ...extra, isOn: on, lastMs: nowMs };
  if (switched) next.lastSwitchMs = nowMs;
  return { on, memory: next };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

// --- 1. classic time-proportioning, duty latched at the window start --------------------------

export interface LatchedTpMemory extends RelayMemory {
  windowStartMs?: number;
  windowMs?: number;
  onMs?: number;
}

/**
 * Omron/Eurotherm-style TP: at each window start the duty is latched and the pulse length fixed.
 * `periodExponent` p > 0 lengthens the window at duties near 0/1:
 * window = baseWindow · (0.25 / d(1−d))^p, capped at `maxWindowMs` (p = 0: fixed window).
 */
export function latchedTp(
  baseWindowMs: number,
  times: MinTimes,
  periodExponent = 0,
  maxWindowMs = 4 * baseWindowMs,
): Modulator<LatchedTpMemory> {
  return {
    id: `TP latched ${baseWindowMs / 1000}s p${periodExponent}`,
    initial: () => ({ isOn: false }),
    step(input, memory) {
      const { nowMs } = input;
      const duty = clamp01(input.duty);
      let { windowStartMs, windowMs, onMs } = memory;
      if (
        windowStartMs === undefined ||
        windowMs === undefined ||
        onMs === undefined ||
        nowMs >= windowStartMs + windowMs
      ) {
        windowStartMs = nowMs;
        const spread = duty > 0 && duty < 1 ? (0.25 / (duty * (1 - duty))) ** periodExponent : 1;
        windowMs = Math.min(maxWindowMs, baseWindowMs * spread);
        onMs = Math.round(duty * windowMs);
        if (onMs < times.minOnMs) onMs = 0;
        if (windowMs - onMs < times.minOffMs) onMs = windowMs;
      }
      // Duty 0 / 1 act at once (safety: saturation means steady off / on).
      let want = nowMs < windowStartMs + onMs;
      if (duty <= 0) want = false;
      if (duty >= 1) want = true;
      return commit(memory, want, nowMs, times, { windowStartMs, windowMs, onMs });
    },
  };
}

// --- 2. sigma-delta ----------------------------------------------------------------------------

export interface SigmaDeltaMemory extends RelayMemory {
  /** ∫(duty − on) dt, s. */
  accS: number;
}

/**
 * Sigma-delta (first-order, with hysteresis): acc += (duty − on)·dt; switch on at acc ≥ Q,
 * off at acc ≤ −Q. Period = 2Q / (d(1−d)). Q(d) = (T/8)·(4d(1−d))^p, so at d = 0.5 the period is
 * T; p = 0 is plain sigma-delta (period ∝ 1/(d(1−d))), p = 0.5 the IAE-per-switch optimum
 * (period ∝ 1/√(d(1−d))), p = 1 a fixed period. The accumulator is clamped to ±clampQ·Q.
 */
export function sigmaDelta(
  periodMs: number,
  times: MinTimes,
  exponent = 0,
  clampQ = 1.5,
): Modulator<SigmaDeltaMemory> {
  const periodS = periodMs / 1000;
  return {
    id: `ΣΔ T${periodS}s p${exponent}`,
    initial: () => ({ isOn: false, accS: 0 }),
    step(input, memory) {
      const { nowMs } = input;
      const duty = clamp01(input.duty);
      const dtS = memory.lastMs === undefined ? 0 : (nowMs - memory.lastMs) / 1000;
      const q = Math.max(1, (periodS / 8) * (4 * duty * (1 - duty)) ** exponent);
      let accS = memory.accS + (duty - (memory.isOn ? 1 : 0)) * dtS;
      accS = Math.min(clampQ * q, Math.max(-clampQ * q, accS));
      let want = memory.isOn;
      if (!memory.isOn && accS >= q) want = true;
      if (memory.isOn && accS <= -q) want = false;
      if (duty <= 0) want = false;
      if (duty >= 1) want = true;
      return commit(memory, want, nowMs, times, { accS });
    },
  };
}

// --- 3. hysteresis on the measurement, centred by a slow integral, optional predictor -----------

export interface TrimmedHysteresisMemory extends RelayMemory {
  /** Threshold shift, °C: integrates the error so the ripple's mean sits on the setpoint. */
  shiftC: number;
  /** Previous reading (for the slope) and the current slope estimate, °C/s. */
  prevMeasured?: number;
  prevAtMs?: number;
  lastReadAtMs?: number;
  slopePerS: number;
}

/**
 * On when ŷ < r + shift − h, off when ŷ > r + shift + h; ŷ = y + predictS·dy/dt (slope from
 * the last two readings, extrapolated to now). shift += (r − y)·dt / trimS (a slow integral),
 * clamped to ±maxShiftC. PID duty 0 / 1 override (steady off / on), so the transient is the PI's.
 */
export function trimmedHysteresis(
  halfBandC: number,
  times: MinTimes,
  opts: {
    predictS?: number;
    trimS?: number;
    maxShiftC?: number;
    extrapolate?: boolean;
    pidOverride?: boolean;
  } = {},
): Modulator<TrimmedHysteresisMemory> {
  const predictS = opts.predictS ?? 0;
  const trimS = opts.trimS ?? 0;
  const maxShiftC = opts.maxShiftC ?? 2;
  const pidOverride = opts.pidOverride ?? true;
  return {
    id: `hyst ±${halfBandC} pred${predictS}s trim${trimS}s${pidOverride ? '' : ' noPID'}`,
    initial: () => ({ isOn: false, shiftC: 0, slopePerS: 0 }),
    step(input, memory) {
      const { nowMs, measured, measuredAtMs, setpoint } = input;
      let { shiftC, prevMeasured, prevAtMs, lastReadAtMs, slopePerS } = memory;
      if (measured === undefined || measuredAtMs === undefined)
        return commit(memory, false, nowMs, times, {});
      if (measuredAtMs !== lastReadAtMs) {
        if (prevMeasured !== undefined && prevAtMs !== undefined && measuredAtMs > prevAtMs) {
          const raw = (measured - prevMeasured) / ((measuredAtMs - prevAtMs) / 1000);
          slopePerS += 0.5 * (raw - slopePerS);
        }
        prevMeasured = measured;
        prevAtMs = measuredAtMs;
        lastReadAtMs = measuredAtMs;
      }
      const dtS = memory.lastMs === undefined ? 0 : (nowMs - memory.lastMs) / 1000;
      if (trimS > 0)
        shiftC = Math.min(maxShiftC, Math.max(-maxShiftC, shiftC + ((setpoint - measured) * dtS) / trimS));
      const sinceS = opts.extrapolate ? (nowMs - measuredAtMs) / 1000 : 0;
      const predicted = measured + slopePerS * (predictS + sinceS);
      const centre = setpoint + shiftC;
      let want = memory.isOn;
      if (predicted < centre - halfBandC) want = true;
      if (predicted > centre + halfBandC) want = false;
      if (pidOverride) {
        if (input.duty <= 0) want = false;
        if (input.duty >= 1) want = true;
      }
      return commit(memory, want, nowMs, times, { shiftC, prevMeasured, prevAtMs, lastReadAtMs, slopePerS });
    },
  };
}

// --- 4. hysteresis on the PID duty: homeostat's duty band ------------------------------------

/**
 * Relay on when duty > 0.5 + h, off when duty < 0.5 − h (the PID's integral centres the ripple,
 * its P term on the ripple sets the period). h in duty units. This is src/core/duty-band.ts.
 */
export function dutyHysteresis(halfBand: number, times: MinTimes): Modulator<RelayMemory> {
  return {
    id: `duty-hyst ±${halfBand}`,
    initial: () => ({ isOn: false }),
    step(input, memory) {
      const result = dutyBand(input.duty, memory, input.nowMs, { ...times, halfBand });
      return { on: result.on, memory: { ...result.memory, lastMs: input.nowMs } };
    },
  };
}
