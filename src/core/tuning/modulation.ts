import type { FopdtModel } from './identify-fopdt.js';

/**
 * How a relay should modulate a PID's duty on an identified plant, pure: a time-proportioning
 * window (the recommendation) and, for who wants the relay to follow the loop, a duty band.
 *
 * The physics. A relay's ripple is set by its switching period P, not by the controller: a
 * first-order lag τ driven by a square wave of duty d swings |K|·… and at d = 0.5 exactly by
 * |K|·tanh(P/(4τ)) peak to peak (≈ |K|·P/(4τ) for P ≪ τ). Any modulation switching at most N
 * times an hour (P ≥ 7200/N s) has that floor. So the rate is chosen first, and the modulation
 * that regulates best at that rate is used.
 *
 * Window (recommended). W = max(BUDGET_WINDOW_S, min(θ, 4τ·band/|K|)): no longer than θ (it
 * adds about W/2 of delay) nor than the window whose ripple stays within the band, but never
 * shorter than the switching budget allows (MAX_SWITCHES_PER_HOUR, two switches a window).
 * Measured (`node --import tsx test/bench/autotune.ts`, +2 °C step, SIMC PI on the true model,
 * IAE °C·s / switches per hour): a 240 s window against the duty band (kp · 0.15 °C, min on/off
 * 30 s): room 1792/29 vs 1984/25, slow greenhouse 2316/28 vs 5006/8, water mass 4841/29 vs
 * 17041/4, second-order 1251/30 vs 3035/11, kettle 12887/27 vs 23206/14. The band lets the
 * plant's own relay oscillation set the period (about 2θ plus the time to cross the band), at
 * the dead time's amplitude; the window spends the same switching budget evenly. Detuning the
 * gains for the window's delay (SIMC with θ + W/2) measured no better (room 1977, water 5006),
 * so the gains stay SIMC's.
 *
 * Duty band (duty-band.ts, the alternative). The PID's proportional term turns measurement
 * noise σ into duty noise kp·σ; a band narrower than that flips the relay on noise. So the band
 * in the loop's unit is the autotune's own relay hysteresis, max(3σ, one quantum, floor), and in
 * duty units halfBand = kp · band (≤ 0.49). Its switching follows the loop (a compressor with
 * minimum times, a load that changes), at the price of the ripple above.
 *
 * A very fast plant (the kettle: K 80, τ 90 s) cannot be held by a relay at this rate at all:
 * W = 240 s swings it by 80·tanh(240/360) ≈ 47 °C. `windowRipple` says so; such a plant wants a
 * solid-state relay driven at a few seconds' cycle, i.e. a continuous actuator to the loop.
 */

export interface ModulationSuggestion {
  /** Which modulation the figures recommend: the window (see above). */
  recommended: 'window' | 'band';
  /** Duty band half width in the loop's unit (the config's `band`). */
  band: number;
  /** The same in duty units for the PID's kp: min(0.49, kp · band). */
  halfBandDuty: number;
  /** Time-proportioning window, s. */
  windowS: number;
  /** Expected ripple with that window at duty 0.5, peak to peak, loop unit (first-order bound). */
  windowRipple: number;
  /** Switches per hour of that window at a duty strictly between 0 and 1. */
  windowSwitchesPerHour: number;
}

/** Switching budget of the suggestion: a relay and the load it drives wear per switch. */
export const MAX_SWITCHES_PER_HOUR = 30;
/** Shortest window suggested, s: two switches a window within MAX_SWITCHES_PER_HOUR. */
export const BUDGET_WINDOW_S = (2 * 3600) / MAX_SWITCHES_PER_HOUR;

export function suggestModulation(
  model: Pick<FopdtModel, 'gain' | 'timeConstantS' | 'deadTimeS'>,
  kp: number,
  band: number,
): ModulationSuggestion {
  const gain = Math.abs(model.gain);
  const byRipple = (4 * model.timeConstantS * band) / gain;
  const windowS = Math.max(BUDGET_WINDOW_S, Math.min(model.deadTimeS, byRipple));
  return {
    recommended: 'window',
    band,
    halfBandDuty: Math.min(0.49, kp * band),
    windowS,
    windowRipple: gain * Math.tanh(windowS / (4 * model.timeConstantS)),
    windowSwitchesPerHour: (2 * 3600) / windowS,
  };
}
