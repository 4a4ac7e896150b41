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
  /** Last output u (after clamping). */
  lastOutput: number;
  /** The gains the memory was built with; a change triggers a bumpless re-base. */
  lastKp?: number;
  lastTdS?: number;
  lastSetpointWeight?: number;
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

const DEFAULT_MAX_GAP_S = 600;

/** Shrinks |error| by half the band; continuous, so entering the band causes no jump. */
function deadbanded(error: number, band: number): number {
  const half = band / 2;
  if (error > half) return error - half;
  if (error < -half) return error + half;
  return 0;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * One controller update for a new reading. Calling it again with the same reading
 * (same atMs) returns the same output and memory: a cycle without news changes nothing.
 * A reading stamped before the previous one (the clock went back) resumes without
 * integrating or differentiating.
 */
export function pidStep(params: PidParams, memory: PidMemory, input: PidInput): PidResult {
  const { kp, tiS, tdS, outputMin, outputMax } = params;
  const setpointWeight = params.setpointWeight ?? 1;
  const feedforward = input.feedforward ?? 0;
  const { setpoint, measured, atMs } = input;

  if (memory.lastAtMs !== undefined && atMs === memory.lastAtMs) {
    return { output: memory.lastOutput, memory };
  }

  // A reading older than the last one means the clock went back (NTP correcting a Pi without a
  // real-time clock, a restart with a slower clock): resume from it rather than freeze until
  // time catches up. gapS undefined = nothing to integrate or differentiate across.
  const wentBack = memory.lastAtMs !== undefined && atMs < memory.lastAtMs;
  const gapS = memory.lastAtMs === undefined || wentBack ? undefined : (atMs - memory.lastAtMs) / 1000;
  const continuing =
    gapS !== undefined && gapS <= (params.maxGapS ?? DEFAULT_MAX_GAP_S) && memory.lastMeasured !== undefined;
  const dtS = continuing ? gapS : 0;

  let integral = rebaseOnTuningChange(params, memory, setpointWeight);
  const integralBefore = integral;

  let derivativePerS = continuing ? memory.derivativePerS : 0;
  if (continuing && dtS > 0 && memory.lastMeasured !== undefined) {
    const raw = (measured - memory.lastMeasured) / dtS;
    const filterS = params.derivativeFilterS ?? defaultDerivativeFilterS(tdS);
    // Backward-Euler first-order filter: stable for any dt, exact for filterS = 0.
    derivativePerS += (dtS / (filterS + dtS)) * (raw - derivativePerS);
  }

  const deadband = params.errorDeadband ?? 0;
  const error = deadbanded(setpoint - measured, deadband);
  const proportional = deadband > 0 ? kp * error : kp * (setpointWeight * setpoint - measured);
  const derivative = -kp * tdS * derivativePerS;

  if (tiS > 0 && dtS > 0) {
    const trackingS = params.trackingTimeS ?? tiS / 2;
    const unclamped = proportional + integral + derivative + feedforward;
    const saturated = clamp(unclamped, outputMin, outputMax);
    integral += ((kp * dtS) / tiS) * error + (dtS / trackingS) * (saturated - unclamped);
  }
  // Second guard besides back-calculation: at rest (e = 0) the output is I + ff + Kp·(b − 1)·r,
  // so the integral never needs to leave [min, max] − ff − Kp·(b − 1)·r. With b < 1 that
  // constant is large (−5 for Kp 0.5, b 0.5, r 20 °C), hence the shift. Integration may not push
  // the integral past the range, but a value already outside it (a bumpless re-base, a moved
  // feedforward or setpoint) is not snapped back: that would bump the output.
  if (tiS > 0) {
    const restOffset = deadband > 0 ? 0 : kp * (setpointWeight - 1) * setpoint;
    const low = outputMin - feedforward - restOffset;
    const high = outputMax - feedforward - restOffset;
    integral = clamp(integral, Math.min(low, integralBefore), Math.max(high, integralBefore));
  } else {
    integral = 0;
  }

  const output = clamp(proportional + integral + derivative + feedforward, outputMin, outputMax);
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
      lastKp: kp,
      lastTdS: tdS,
      lastSetpointWeight: setpointWeight,
    },
  };
}

/**
 * When Kp, Td or b changed since the last update, moves the integrator so that the new gains
 * applied to the last inputs reproduce the last output (bumpless parameter change).
 */
function rebaseOnTuningChange(params: PidParams, memory: PidMemory, setpointWeight: number): number {
  const { lastKp, lastTdS, lastSetpointWeight, lastMeasured, lastSetpoint } = memory;
  const changed =
    lastKp !== undefined &&
    (lastKp !== params.kp || lastTdS !== params.tdS || lastSetpointWeight !== setpointWeight);
  if (!changed || lastMeasured === undefined || lastSetpoint === undefined) return memory.integral;
  const deadband = params.errorDeadband ?? 0;
  const proportional =
    deadband > 0
      ? params.kp * deadbanded(lastSetpoint - lastMeasured, deadband)
      : params.kp * (setpointWeight * lastSetpoint - lastMeasured);
  const derivative = -params.kp * params.tdS * memory.derivativePerS;
  return memory.lastOutput - proportional - derivative - memory.lastFeedforward;
}
