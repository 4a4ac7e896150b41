import type { DisturbanceMemory } from './feedforward.js';
import { clamp } from './numbers.js';
import { isAheadOfNow, msToS } from './time.js';

/**
 * PID controller, ISA (standard) form, pure: the clock is the reading's timestamp.
 *
 *   e  = r − y, or dz(r − y) with an error deadband (dz shrinks |e| by half the band, ≥ 0)
 *   P  = Kp · (b·r − y)                       setpoint weight b (1 = classic); Kp · e with a deadband
 *   I  = I + Kp·dt/Ti · e + dt/Tt · (u − v)   back-calculation anti-windup, then clamped
 *   D  = −Kp · Td · dŷ/dt                     derivative on measurement, first-order filtered (Tf)
 *   v  = P + I + D + ff                       ff: optional feedforward (e.g. from a plant model)
 *   u  = clamp(v, outputMin, outputMax)
 *
 * References: Åström & Hägglund, "Advanced PID Control" (2006), §3.5 (setpoint weighting),
 * §3.4 (derivative filter), §3.5 anti-windup by back-calculation with tracking time Tt;
 * Skogestad, "Simple analytic rules for model reduction and PID controller tuning" (SIMC, 2003).
 *
 * Why these choices:
 * - Derivative on measurement: a setpoint step gives no derivative kick; the filter (default
 *   Tf = Td) bounds a 0.0625 °C DS18B20 step's effect on D to Kp·0.0625, like on P.
 * - Back-calculation with Tt = Ti/2 (default): while the output is saturated the integrator is
 *   pulled towards the value that makes v equal the limit, so it leaves saturation already near
 *   the holding output instead of with a wound-up (overshoot) or empty (slow tail) integrator.
 *   Measured by `npm run bench:control`: on a room plant (K 20, τ 600 s, θ 60 s, SIMC tuning)
 *   Tt = Ti/2 gives no overshoot and IAE ≈ 1.13× the time-optimal bound; Tt = Ti overshoots.
 * - The integral term is kept in output units, so changing Ti never bumps the output; changing
 *   Kp, Td or b re-bases the integrator so the output continues from where it was.
 * - dt comes from the readings' timestamps; a gap longer than `maxGapS` (a restart from stored
 *   memory, a sensor outage) re-bases the derivative instead of differentiating across it.
 */

/** Tuning and limits of one PID. The output is a fraction of full actuator power. */
export interface PidParams {
  /** Proportional gain: output fraction per unit of error (per °C for temperature). */
  kp: number;
  /** Integral time in seconds; 0 disables the integral action. */
  tiS: number;
  /** Derivative time in seconds; 0 disables the derivative action. */
  tdS: number;
  /** Time constant of the derivative's first-order filter, seconds. Default tdS (see below). */
  derivativeFilterS?: number;
  /** Setpoint weight b for the proportional term, 0..1. Default 1. */
  setpointWeight?: number;
  /** Anti-windup tracking time in seconds. Default tiS / 2. */
  trackingTimeS?: number;
  /** Lowest output, e.g. 0 for a heater alone, −1 when a cooler shares the loop. */
  outputMin: number;
  /** Highest output, normally 1. */
  outputMax: number;
  /**
   * Error deadband (full width, unit of the quantity). Within ±band/2 of the setpoint the
   * error counts as zero: no proportional push and no integration, so a split-range loop
   * (heater + cooler) rests between them instead of alternating. Default 0.
   */
  errorDeadband?: number;
  /** A gap between readings longer than this (s) resumes instead of integrating across it. Default 600. */
  maxGapS?: number;
}

/**
 * Default derivative filter: Tf = Td (filter ratio N = 1). The usual N = 8…20 assumes fast,
 * fine readings; homeostat's arrive every 5–55 s in 0.0625 °C steps. With Tf = Td a sensor
 * step moves the derivative term by at most Kp·Δ, no more than it moves the proportional
 * term, so quantization is never amplified. Measured (`npm run bench:control`, quantized
 * scenario): output total variation 2.2× the bound on the slow plant instead of 6.8× with
 * N = 8, and the room step's IAE unchanged (1.08× the bound).
 */
export function defaultDerivativeFilterS(tdS: number): number {
  return tdS;
}

/** Everything the PID remembers between readings; persisted so a restart resumes bumplessly. */
export interface PidMemory {
  /** Integral term, in output units. */
  integral: number;
  /** Filtered derivative of the measurement, unit per second. */
  derivativePerS: number;
  lastMeasured?: number;
  lastAtMs?: number;
  lastSetpoint?: number;
  lastFeedforward: number;
  /**
   * The measured disturbance the last feedforward used and its lead's state (feedforward.ts),
   * absent when it used none. Kept by the loop's controller step, not by pidStep: it tells a
   * change of the disturbance (which moves the output) from a switch on or off (which must not).
   */
  lastDisturbance?: DisturbanceMemory;
  /** Last output u (after clamping). */
  lastOutput: number;
  /** The gains the memory was built with; a change triggers a bumpless re-base. */
  lastKp?: number;
  lastTdS?: number;
  lastSetpointWeight?: number;
  /**
   * Split-range loops with per-side gains: the side whose gains the memory was built with
   * (controller-output.ts). Absent on every other loop, and in memory stored before it existed.
   */
  side?: 'raise' | 'lower';
}

export interface PidInput {
  setpoint: number;
  measured: number;
  /** Time the reading was taken (not the time of this call). */
  atMs: number;
  /** Added to the output before clamping; see setpointFeedforward. Default 0. */
  feedforward?: number;
}

export interface PidResult {
  output: number;
  memory: PidMemory;
}

/**
 * Memory for a controller starting with its integrator at `output`: a fresh loop, or a loop
 * switching from `off` (or from a fault) back to regulating, started from the actuator's real
 * level. The first reading then sets the derivative's reference and nothing is integrated
 * across the time the controller was not running.
 */
export function pidInitialMemory(output = 0): PidMemory {
  return { integral: output, derivativePerS: 0, lastFeedforward: 0, lastOutput: output };
}

/** Default `maxGapS`: a longer gap between readings resumes instead of integrating across it. */
export const DEFAULT_MAX_GAP_S = 600;

/** Shrinks |error| by half the band; continuous, so entering the band causes no jump. */
function deadbanded(error: number, band: number): number {
  const half = band / 2;
  if (error > half) return error - half;
  if (error < -half) return error + half;
  return 0;
}

/** The gains a step works with, defaults filled in. */
interface Gains {
  kp: number;
  tdS: number;
  setpointWeight: number;
  deadband: number;
}

function gainsOf(params: PidParams): Gains {
  return {
    kp: params.kp,
    tdS: params.tdS,
    setpointWeight: params.setpointWeight ?? 1,
    deadband: params.errorDeadband ?? 0,
  };
}

/** P: Kp · (b·r − y), or Kp · dz(r − y) with an error deadband (no setpoint weight then). */
function proportionalTerm(gains: Gains, setpoint: number, measured: number): number {
  const { kp, setpointWeight, deadband } = gains;
  return deadband > 0
    ? kp * deadbanded(setpoint - measured, deadband)
    : kp * (setpointWeight * setpoint - measured);
}

/** D: −Kp · Td · dŷ/dt, on the measurement. */
function derivativeTerm(gains: Gains, derivativePerS: number): number {
  return -gains.kp * gains.tdS * derivativePerS;
}

/**
 * The part of the output at rest (e = 0) that is not the integral: Kp·(b − 1)·r, or 0 with an
 * error deadband. The integrator carries its opposite, so a controller that starts (or is kept)
 * at rest starts from there.
 */
export function restOffset(
  params: Pick<PidParams, 'kp' | 'setpointWeight' | 'errorDeadband'>,
  setpoint: number,
): number {
  const deadband = params.errorDeadband ?? 0;
  return deadband > 0 ? 0 : params.kp * ((params.setpointWeight ?? 1) - 1) * setpoint;
}

/**
 * One controller update for a new reading. Calling it again with the same reading
 * (same atMs) returns the same output and memory: a cycle without news changes nothing.
 * A reading stamped before the previous one (the clock went back) resumes without
 * integrating or differentiating.
 */
export function pidStep(params: PidParams, memory: PidMemory, input: PidInput): PidResult {
  const { setpoint, measured, atMs } = input;
  if (memory.lastAtMs !== undefined && atMs === memory.lastAtMs) {
    return { output: memory.lastOutput, memory };
  }
  const gains = gainsOf(params);
  const feedforward = input.feedforward ?? 0;
  const dtS = continuedDtS(params, memory, atMs);
  const derivativePerS = filteredDerivative(params, memory, measured, dtS);
  const proportional = proportionalTerm(gains, setpoint, measured);
  const derivative = derivativeTerm(gains, derivativePerS);
  const integral = integrate(params, rebaseOnTuningChange(params, memory), {
    dtS,
    error: deadbanded(setpoint - measured, gains.deadband),
    proportional,
    derivative,
    feedforward,
    setpoint,
  });
  const output = clamp(
    proportional + integral + derivative + feedforward,
    params.outputMin,
    params.outputMax,
  );
  return {
    output,
    memory: {
      integral,
      derivativePerS,
      lastMeasured: measured,
      lastAtMs: atMs,
      lastSetpoint: setpoint,
      lastFeedforward: feedforward,
      lastOutput: output,
      lastKp: gains.kp,
      lastTdS: gains.tdS,
      lastSetpointWeight: gains.setpointWeight,
    },
  };
}

/**
 * Seconds since the previous reading, or undefined when there is nothing to integrate or
 * differentiate across: a first reading, a gap longer than `maxGapS` (a restart, an outage), or
 * a reading older than the last one — the clock went back (NTP correcting a Pi without a
 * real-time clock, a restart with a slower clock): resume from it rather than freeze until time
 * catches up.
 */
function continuedDtS(params: PidParams, memory: PidMemory, atMs: number): number | undefined {
  const { lastAtMs } = memory;
  if (lastAtMs === undefined || isAheadOfNow(lastAtMs, atMs) || memory.lastMeasured === undefined) {
    return undefined;
  }
  const gapS = msToS(atMs - lastAtMs);
  return gapS <= (params.maxGapS ?? DEFAULT_MAX_GAP_S) ? gapS : undefined;
}

/** The measurement's derivative through its first-order filter; reset to 0 when not continuing. */
function filteredDerivative(
  params: PidParams,
  memory: PidMemory,
  measured: number,
  dtS: number | undefined,
): number {
  if (dtS === undefined) return 0;
  let derivativePerS = memory.derivativePerS;
  if (dtS > 0 && memory.lastMeasured !== undefined) {
    const raw = (measured - memory.lastMeasured) / dtS;
    const filterS = params.derivativeFilterS ?? defaultDerivativeFilterS(params.tdS);
    // Backward-Euler first-order filter: stable for any dt, exact for filterS = 0.
    derivativePerS += (dtS / (filterS + dtS)) * (raw - derivativePerS);
  }
  return derivativePerS;
}

/** What one integration step needs besides the tuning; dtS undefined = nothing to integrate. */
interface IntegrationStep {
  dtS: number | undefined;
  error: number;
  proportional: number;
  derivative: number;
  feedforward: number;
  setpoint: number;
}

/**
 * I after this step: back-calculation while saturated, then bounded.
 *
 * The bound is a second guard besides back-calculation: at rest (e = 0) the output is
 * I + ff + Kp·(b − 1)·r, so the integral never needs to leave [min, max] − ff − Kp·(b − 1)·r.
 * With b < 1 that constant is large (−5 for Kp 0.5, b 0.5, r 20 °C), hence the shift.
 * Integration may not push the integral past the range, but a value already outside it (a
 * bumpless re-base, a moved feedforward or setpoint) is not snapped back: that would bump the
 * output.
 */
function integrate(params: PidParams, integralBefore: number, step: IntegrationStep): number {
  const { kp, tiS, outputMin, outputMax } = params;
  if (!(tiS > 0)) return 0;
  const dtS = step.dtS ?? 0;
  let integral = integralBefore;
  if (dtS > 0) {
    const trackingS = params.trackingTimeS ?? tiS / 2;
    const unclamped = step.proportional + integral + step.derivative + step.feedforward;
    const saturated = clamp(unclamped, outputMin, outputMax);
    integral += ((kp * dtS) / tiS) * step.error + (dtS / trackingS) * (saturated - unclamped);
  }
  const offset = restOffset(params, step.setpoint);
  const low = outputMin - step.feedforward - offset;
  const high = outputMax - step.feedforward - offset;
  return clamp(integral, Math.min(low, integralBefore), Math.max(high, integralBefore));
}

/**
 * When Kp, Td or b changed since the last update, moves the integrator so that the new gains
 * applied to the last inputs reproduce the last output (bumpless parameter change).
 */
function rebaseOnTuningChange(params: PidParams, memory: PidMemory): number {
  const gains = gainsOf(params);
  const { lastKp, lastTdS, lastSetpointWeight, lastMeasured, lastSetpoint } = memory;
  const changed =
    lastKp !== undefined &&
    (lastKp !== gains.kp || lastTdS !== gains.tdS || lastSetpointWeight !== gains.setpointWeight);
  if (!changed || lastMeasured === undefined || lastSetpoint === undefined) return memory.integral;
  const proportional = proportionalTerm(gains, lastSetpoint, lastMeasured);
  const derivative = derivativeTerm(gains, memory.derivativePerS);
  return memory.lastOutput - proportional - derivative - memory.lastFeedforward;
}
