import type { FopdtModel } from './identify-fopdt.js';

/**
 * SIMC tuning (Skogestad 2003) from a FOPDT model, in the units homeostat's PID takes
 * (src/core/pid.ts, ISA form): kp in output fraction (0..1) per unit of error, tiS and tdS in s.
 *
 *   kp = τ / (|K|·(τc + θ)),  tiS = min(τ, 4·(τc + θ)),  tdS = θ/3 for a PID, else 0
 *
 * The same rules as docs/tuning.md, "Gains by hand (SIMC)". |K|: a cooler's model has a negative gain, and
 * homeostat drives the lowering actuator with the negative side of the same controller's output,
 * so its kp is positive too.
 *
 * Second lag. When the model says it was reduced by the half rule from a fitted second lag τ2
 * (`secondLagS`, identify-half-rule.ts) and τ2 is longer than the dead time left without it
 * (θ0 = θ − τ2/2), SIMC keeps the lag as derivative action (Skogestad 2003, §4: "PID for
 * τ2 > θ"): series PID on τ1 = τ − τ2/2, θ0 with kp' = τ1/(|K|(τc + θ0)), ti' = min(τ1,
 * 4(τc + θ0)), td' = τ2, converted to the ISA form pidStep uses (kp = kp'(1 + td'/ti'),
 * ti = ti' + td', td = ti'·td'/(ti' + td')). τc stays the caller's (θ of the half rule by
 * default), so the loop is no faster than the PI's; the derivative buys the phase the PI lost to
 * the second lag. Measured (`node --import tsx test/bench/autotune.ts`, second-order plant
 * τ 600, θ 30, second lag 150 s): step IAE 622 °C·s with 1.4 % overshoot against the PI's 792
 * at equal overshoot (both with the setpoint weight below).
 *
 * Setpoint weight b (pid.ts: P = kp·(b·r − y)). SIMC's τc = θ is a disturbance-rejection
 * tuning; its setpoint step overshoots 4–20 % (the PI's zero at −1/ti, faster than τ when
 * ti = 8θ < τ; the second lag the half rule hides). b changes only the setpoint path: y/r =
 * T(s)·(b·ti·s + 1)/(ti·s + 1), T the complementary sensitivity, which b leaves alone, so
 * disturbance rejection and robustness are those of SIMC. The rule: the largest b (steps of
 * 0.05) for which the model's own closed loop (unsaturated, continuous, derivative on the
 * measurement filtered as pid.ts does) overshoots a unit step by at most SETPOINT_OVERSHOOT;
 * the largest, because a smaller b slows the response (IAE grows ~linearly in 1 − b).
 * SETPOINT_OVERSHOOT is the autotune's target, 2 % of the step. Measured on the five plants: see
 * setpointWeightFor and the bench report (notes/autotune-bench-report-2.txt).
 */

export interface SimcModel extends Pick<FopdtModel, 'gain' | 'timeConstantS' | 'deadTimeS'> {
  /** A second lag the half rule folded into τ and θ, s (identify-half-rule.ts); 0 or absent: none. */
  secondLagS?: number;
}

export interface SimcOptions {
  /** Closed-loop time constant τc, s. Default θ (τc = 2θ for gentler action). */
  closedLoopS?: number;
  /** Add derivative action Td = θ/3. Default false (PI). */
  derivative?: boolean;
  /**
   * The loop's reading period, s: the PID acts once a reading and holds its output in between,
   * which delays it by about half a period; the setpoint weight's simulation adds that to θ.
   * Default 0. Measured (kettle K 80, τ 300 s, θ 20 s, a reading every 5 s): with
   * kp 0.094, ti 160 s, b 0.85 overshoots 2.0 % nominally and 5.6–6.1 % in the loop (nominal
   * with θ + 2.5 s: 6.2 %); b 0.8, chosen with it, 1.8–2.5 %.
   */
  samplePeriodS?: number;
}

export interface SimcGains {
  kp: number;
  tiS: number;
  tdS: number;
  /** Setpoint weight b for the proportional term (pid.ts), from the model: see above. */
  setpointWeight: number;
}

/**
 * Nominal overshoot the setpoint weight allows, fraction of the step: 1.5 %, a margin under the
 * 2 % aimed at, since the rule sees the identified model (a second-order plant reduced to FOPDT
 * by the half rule overshot 2.05 % with a nominal 2 %).
 */
export const SETPOINT_OVERSHOOT = 0.015;
const WEIGHT_STEP = 0.05;
/** See setpointWeightFor: overshoot above b = 0's not worth the IAE, fraction of the step. */
export const FLOOR_MARGIN = 0.0025;

export function simcGains(model: SimcModel, options: SimcOptions = {}): SimcGains {
  const { gain, timeConstantS, deadTimeS } = model;
  const closedLoopS = options.closedLoopS ?? deadTimeS;
  if (!(Math.abs(gain) > 0) || !(timeConstantS > 0) || !(deadTimeS >= 0)) {
    throw new RangeError('simcGains: needs gain ≠ 0, timeConstantS > 0, deadTimeS ≥ 0');
  }
  if (!(closedLoopS + deadTimeS > 0)) {
    // No dead time and τc 0 would ask for an infinite gain.
    throw new RangeError('simcGains: closedLoopS + deadTimeS must be > 0');
  }
  const pid = secondLagPid(model, closedLoopS);
  const gains = pid ?? {
    kp: timeConstantS / (Math.abs(gain) * (closedLoopS + deadTimeS)),
    tiS: Math.min(timeConstantS, 4 * (closedLoopS + deadTimeS)),
    tdS: options.derivative ? deadTimeS / 3 : 0,
  };
  return { ...gains, setpointWeight: setpointWeightFor(model, gains, options.samplePeriodS ?? 0) };
}

/** SIMC's series PID for a significant second lag, in ISA form; undefined: keep the PI. */
function secondLagPid(
  model: SimcModel,
  closedLoopS: number,
): { kp: number; tiS: number; tdS: number } | undefined {
  const lagS = model.secondLagS ?? 0;
  const deadS = model.deadTimeS - lagS / 2;
  const slowS = model.timeConstantS - lagS / 2;
  if (!(lagS > 0) || !(deadS >= 0) || !(lagS > deadS) || !(slowS >= lagS)) return undefined;
  if (!(closedLoopS + deadS > 0)) return undefined;
  const kp = slowS / (Math.abs(model.gain) * (closedLoopS + deadS));
  const tiS = Math.min(slowS, 4 * (closedLoopS + deadS));
  return { kp: kp * (1 + lagS / tiS), tiS: tiS + lagS, tdS: (tiS * lagS) / (tiS + lagS) };
}

/**
 * The largest b in 0..1 (steps of WEIGHT_STEP) whose nominal unit setpoint step overshoots by at
 * most SETPOINT_OVERSHOOT. When even b = 0 overshoots more (a dead-time-dominated loop: the
 * overshoot lives in T itself, and the prefilter's lag ti = τ is shorter than θ, so b removes
 * only about half of it), the largest b within FLOOR_MARGIN of b = 0's overshoot: a smaller b
 * would cost IAE for less than that. Pure arithmetic, ~20 ms at most.
 */
export function setpointWeightFor(
  model: SimcModel,
  gains: { kp: number; tiS: number; tdS: number },
  samplePeriodS = 0,
): number {
  // The reading period's hold as dead time (SimcOptions.samplePeriodS), in the simulation only.
  const sampled = samplePeriodS > 0 ? { ...model, deadTimeS: model.deadTimeS + samplePeriodS / 2 } : model;
  const floor = nominalOvershoot(sampled, gains, 0);
  const allowed = Math.max(SETPOINT_OVERSHOOT, floor + FLOOR_MARGIN);
  for (let b = 1; b > 0; b = Math.round((b - WEIGHT_STEP) * 100) / 100) {
    if (nominalOvershoot(sampled, gains, b) <= allowed) return b;
  }
  return 0;
}

/**
 * Overshoot of a unit setpoint step of the model (FOPDT, or FOPDT with its second lag split
 * out again) under pidStep's law without limits: P = kp(b·r − y), I = kp/ti ∫e, D = −kp·td·ẏf,
 * ẏf filtered with Tf = td. Steps of 1/200 of the fastest time constant, 30 (τ + θ) long, but at
 * most MAX_OVERSHOOT_STEPS: it runs inside a loop's cycle, and a fit with a tiny dead time on a
 * slow plant (θ 0.5 s, τ 20,000 s) asked for 10⁸ steps, seconds with every loop frozen. The lags
 * advance by their exact first-order factor (1 − e^(−dt/T)), stable at any step.
 */
export const MAX_OVERSHOOT_STEPS = 200_000;

export function nominalOvershoot(
  model: SimcModel,
  gains: { kp: number; tiS: number; tdS: number },
  setpointWeight: number,
): number {
  const gain = Math.abs(model.gain);
  // The half rule put half the lag into θ: a lag over 2θ is not one the model can hold.
  const lagS =
    model.secondLagS !== undefined && model.secondLagS > 0
      ? Math.min(model.secondLagS, 2 * model.deadTimeS)
      : 0;
  const slowS = model.timeConstantS - lagS / 2;
  const deadS = model.deadTimeS - lagS / 2;
  const fastest = Math.min(slowS, lagS > 0 ? lagS : slowS, deadS > 0 ? deadS : slowS, gains.tdS || slowS);
  const horizonS = 30 * (model.timeConstantS + model.deadTimeS);
  const dtS = Math.max(fastest / 200, horizonS / MAX_OVERSHOOT_STEPS);
  const steps = Math.ceil(horizonS / dtS);
  const follow = (timeS: number) => 1 - Math.exp(-dtS / timeS);
  const filterFactor = gains.tdS > 0 ? follow(gains.tdS) : 0;
  const slowFactor = follow(slowS);
  const lagFactor = lagS > 0 ? follow(lagS) : 1;
  const delay = Math.round(deadS / dtS);
  const past = new Float64Array(delay + 1);
  let x = 0;
  let y = 0;
  let integral = 0;
  let filtered = 0;
  let last = 0;
  let peak = 0;
  for (let i = 0; i < steps; i++) {
    let d = 0;
    if (gains.tdS > 0) {
      // Filtered derivative of y (Tf = td), as pid.ts's default filter.
      const slope = (y - last) / dtS;
      filtered += filterFactor * (slope - filtered);
      d = -gains.kp * gains.tdS * filtered;
    }
    last = y;
    const u = gains.kp * (setpointWeight - y) + integral + d;
    if (gains.tiS > 0) integral += ((gains.kp * dtS) / gains.tiS) * (1 - y);
    past[i % (delay + 1)] = u;
    const delayed = i >= delay ? past[(i - delay) % (delay + 1)]! : 0;
    x += slowFactor * (gain * delayed - x);
    y += lagFactor * (x - y);
    if (y > peak) peak = y;
  }
  return Math.max(0, peak - 1);
}
