import { freshnessOf } from './liveness.js';
import type { Reading } from './types.js';

/**
 * Feedforward from a static plant model, and from a measured disturbance through it.
 *
 * The plant settles at `ambient + gain · u`, so holding the setpoint r needs
 * u_ss = (r − ambient) / gain. With a disturbance sensor (outdoor or ambient temperature)
 * the ambient is measured instead of assumed, and the output follows it at once: a cold
 * front is compensated as it arrives instead of once the room has cooled. Measured on the
 * benchmark room plant (K 20, τ 600 s, θ 60 s), ambient step 10 → 5: IAE 480 °C·s with plain
 * PI, 68 (2.5× the time-optimal bound 27) with the measured feedforward and its lead
 * (`leadLagged`; 104 without), `node --import tsx test/bench/control/feedforward.ts`.
 *
 * Only a change of the measured disturbance may move the output. Every other change of the
 * feedforward (a setpoint change, the disturbance appearing or disappearing, a model change,
 * a controller resuming) is absorbed by the PID's integrator (`absorbedFeedforward`), so it
 * causes no bump. This is also what keeps a setpoint change from overshooting: the PI already
 * brings the output to the new holding value through its integral; a feedforward that jumps
 * there too makes the integrator wind past it by as much (measured, room plant 20 → 20.5 °C:
 * IAE 113 instead of 76, 0.14 °C overshoot; dead-time-dominated plant from ambient: 2.35 °C
 * overshoot). With the change absorbed, setpoint steps behave exactly as plain PI.
 */

export interface PlantModel {
  /**
   * Steady-state change of the quantity per unit of the signed output, above 0: the plant settles
   * at ambient + gain·u with u −1..1, cooling negative. A heater raising 20 °C at full power and a
   * cooler lowering 15 °C are 20 and 15 (an identified cooler's gain per unit of its own level
   * is negative: its model here takes the magnitude).
   */
  gain: number;
  /** Value the quantity settles to with the output at 0 (and the disturbance sensor absent). */
  ambient: number;
  /**
   * Dead time of the plant's response to the output, seconds; gives the disturbance feedforward
   * its lead (see `leadLagged`). Default 0 (static disturbance feedforward).
   */
  deadTimeS?: number;
}

/** What the disturbance feedforward remembers between steps (kept in the PID's memory). */
export interface DisturbanceMemory {
  /** The disturbance value the feedforward used: the reading with its lead. */
  used: number;
  /** The reading through the lead's first-order lag (time constant = half the dead time). */
  lagged: number;
}

/** A sensor whose reading moves the plant's ambient (the loop's `controller.feedforward`). */
export interface DisturbanceSpec {
  sensorId: string;
  /**
   * Share of a change of the sensor that reaches the plant's ambient, 0..1: 1 when the plant
   * settles at the sensor's value with the output off (a greenhouse and the outdoor air); less
   * when the plant also exchanges heat with something the sensor does not see (a room losing a
   * third of its heat through outer walls, the rest to a heated house: 1/3). The ambient used is
   * model.ambient + coupling · (reading − model.ambient).
   */
  coupling: number;
  /** A reading older than this (ms, relative to the loop's reading) is not used. */
  staleAfterMs: number;
  /** Readings outside this range are not used (a broken sensor's −127 °C). */
  plausibleMin: number;
  plausibleMax: number;
}

/** The feedforward of one controller step. */
export interface Feedforward {
  /** Output added to the PID's, signed like it. */
  value: number;
  /** The disturbance as used, undefined when there is no usable reading (model's ambient). */
  disturbance: DisturbanceMemory | undefined;
}

/** Steady-state output holding `setpoint` with the plant at `ambient`; 0 for an unusable gain. */
export function holdingOutput(model: PlantModel, setpoint: number, ambient = model.ambient): number {
  if (model.gain === 0 || !Number.isFinite(model.gain)) return 0;
  return (setpoint - ambient) / model.gain;
}

/** The static setpoint feedforward (the model's own ambient). */
export function setpointFeedforward(model: PlantModel, setpoint: number): number {
  return holdingOutput(model, setpoint);
}

/**
 * The disturbance reading if usable at `atMs` (the loop's reading time, the clock the PID uses):
 * finite, plausible, fresh at `atMs` by core/liveness.ts' rule and at most `staleAfterMs` ahead of it. Anything else falls back to the
 * model's ambient: a missing outdoor sensor must not fault a heater.
 */
export function usableDisturbance(
  spec: DisturbanceSpec,
  reading: Reading | undefined,
  atMs: number,
): number | undefined {
  if (reading === undefined || !Number.isFinite(reading.value) || !Number.isFinite(reading.atMs))
    return undefined;
  if (reading.value < spec.plausibleMin || reading.value > spec.plausibleMax) return undefined;
  // Judged at the loop's reading time by the one staleness rule (a quiet disturbance probe whose
  // device is seen alive stays usable; an offline one is not); one far ahead of it is not used.
  if (reading.atMs - atMs > spec.staleAfterMs) return undefined;
  return freshnessOf(reading, atMs, spec.staleAfterMs).fresh ? reading.value : undefined;
}

/**
 * The disturbance through a lead-lag (1 + θs)/(1 + θs/2), θ the plant's dead time:
 * d + (d − lag(d)) with lag(d) a first-order lag of time constant θ/2.
 *
 * Why: the disturbance reaches the plant at once, the output's answer only θ later, so a static
 * feedforward leaves the heat lost during θ to the feedback (room plant, ambient 10 → 5: IAE
 * 104 °C·s, 3.8× the bound). Ideally u = −d(t + θ)/K (e^{θs}: predict θ ahead), which cannot be
 * built; this lead-lag is its realisable first-order part: after a step Δ the output first moves
 * by 2Δ/K and settles to Δ/K within about θ, making up half of the missing Δ·θ; the feedback,
 * which sees the dip anyway, does the rest. Measured over the lead Δ·θ·a and the lag θ·b
 * (a, b ∈ {0.25 … 1}, `npm run bench:control` scenario B on the four continuous plants),
 * a = b = ½ is best on the dead-time-dominated plant and within 20 % of the best elsewhere:
 * IAE room 68 (2.5× the bound), fast 12, slow 44, dead-time 1461 (1.2×); a full lead (a = 1)
 * overshoots and is 1.7× worse there. Restarts without a pulse after a gap (`dtS` undefined)
 * or when the reading appears.
 */
export function leadLagged(
  deadTimeS: number,
  reading: number,
  before: DisturbanceMemory | undefined,
  dtS: number | undefined,
): DisturbanceMemory {
  if (before === undefined || dtS === undefined || !(deadTimeS > 0))
    return { used: reading, lagged: reading };
  const lagS = deadTimeS / 2;
  const lagged = before.lagged + (dtS / (lagS + dtS)) * (reading - before.lagged);
  return { used: reading + (reading - lagged), lagged };
}

/** What a feedforward step needs besides the model and the setpoint. */
export interface FeedforwardStep {
  /** The disturbance sensor's latest reading, if any. */
  reading: Reading | undefined;
  /** The loop's reading time (the PID's clock). */
  atMs: number;
  /** The disturbance memory of the last step, if it had a usable reading. */
  before: DisturbanceMemory | undefined;
  /** Seconds since the last step; undefined on a first step or after a gap. */
  dtS: number | undefined;
}

/** Feedforward for `setpoint`, with the disturbance reading (and its lead) when usable. */
export function feedforward(
  model: PlantModel,
  disturbanceSpec: DisturbanceSpec | undefined,
  setpoint: number,
  step: FeedforwardStep,
): Feedforward {
  const value = disturbanceSpec ? usableDisturbance(disturbanceSpec, step.reading, step.atMs) : undefined;
  if (value === undefined) return { value: holdingOutput(model, setpoint), disturbance: undefined };
  const disturbance = leadLagged(model.deadTimeS ?? 0, value, step.before, step.dtS);
  const ambient = model.ambient + disturbanceSpec!.coupling * (disturbance.used - model.ambient);
  return { value: holdingOutput(model, setpoint, ambient), disturbance };
}

/**
 * How much of the feedforward's change since the last step the integrator takes over (subtracts),
 * so that the output does not move by it: all of it, except the part due to the measured
 * disturbance changing while it was usable on both steps.
 */
export function absorbedFeedforward(
  model: PlantModel,
  coupling: number,
  before: { value: number; disturbance: DisturbanceMemory | undefined },
  now: Feedforward,
): number {
  const change = now.value - before.value;
  if (before.disturbance === undefined || now.disturbance === undefined) return change;
  const moved = now.disturbance.used - before.disturbance.used;
  return change - holdingOutput(model, 0, coupling * moved);
}
