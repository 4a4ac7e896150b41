import type { FopdtModel } from './identify-fopdt.js';

/**
 * SIMC tuning (Skogestad 2003) from a FOPDT model, in the units homeostat's PID takes
 * (src/core/pid.ts, ISA form): kp in output fraction (0..1) per unit of error, tiS and tdS in s.
 *
 *   kp = τ / (|K|·(τc + θ)),  tiS = min(τ, 4·(τc + θ)),  tdS = θ/3 for a PID, else 0
 *
 * The same rules as the README's "Tuning a PID". |K|: a cooler's model has a negative gain, and
 * homeostat drives the lowering actuator with the negative side of the same controller's output,
 * so its kp is positive too.
 */

export interface SimcOptions {
  /** Closed-loop time constant τc, s. Default θ (τc = 2θ for gentler action). */
  closedLoopS?: number;
  /** Add derivative action Td = θ/3. Default false (PI). */
  derivative?: boolean;
}

export interface SimcGains {
  kp: number;
  tiS: number;
  tdS: number;
}

export function simcGains(
  model: Pick<FopdtModel, 'gain' | 'timeConstantS' | 'deadTimeS'>,
  options: SimcOptions = {},
): SimcGains {
  const { gain, timeConstantS, deadTimeS } = model;
  const closedLoopS = options.closedLoopS ?? deadTimeS;
  if (!(Math.abs(gain) > 0) || !(timeConstantS > 0) || !(deadTimeS >= 0)) {
    throw new RangeError('simcGains: needs gain ≠ 0, timeConstantS > 0, deadTimeS ≥ 0');
  }
  if (!(closedLoopS + deadTimeS > 0)) {
    // No dead time and τc 0 would ask for an infinite gain.
    throw new RangeError('simcGains: closedLoopS + deadTimeS must be > 0');
  }
  return {
    kp: timeConstantS / (Math.abs(gain) * (closedLoopS + deadTimeS)),
    tiS: Math.min(timeConstantS, 4 * (closedLoopS + deadTimeS)),
    tdS: options.derivative ? deadTimeS / 3 : 0,
  };
}
