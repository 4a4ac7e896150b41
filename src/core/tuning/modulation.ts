import type { FopdtModel } from './identify-fopdt.js';

/**
 * How a relay should modulate a PID's duty on an identified plant, pure: a duty band (the
 * recommendation) and, for who wants a fixed switching rate, a time-proportioning window.
 *
 * Duty band (duty-band.ts). The PID's proportional term turns measurement noise σ into duty
 * noise kp·σ; a band narrower than that flips the relay on noise. So the band in the loop's unit
 * is the autotune's own relay hysteresis, max(3σ, one quantum, floor) — the smallest band a
 * reading's noise does not cross by chance (two readings 2·3σ apart: p ≈ 1e-5) — and in duty
 * units halfBand = kp · band (≤ 0.49). The switching period is then set by the plant's dead
 * time, not by the band: a relay switched at a crossing keeps pushing for θ, so the value
 * overshoots each way by about |K|·Δu·θ/τ whatever the band. `npm run bench:control` measured a
 * band of kp · 0.25 °C beating Home Assistant's ±0.3 °C hysteresis on both relay plants with no
 * more switches, where 600 s windows were twice as bad on the room plant (K 20, τ 600, θ 60).
 *
 * Window. A window W at duty d ripples the value by about |K|·d(1−d)·W/τ peak to peak (W ≪ τ),
 * at most |K|·W/(4τ), and adds about W/2 of delay. W is the largest window that keeps the
 * ripple within the band (W = 4τ·band/|K|) and the added delay within θ/2 (W ≤ θ), but never
 * below MIN_WINDOW_S (a relay switching more than twice a minute wears for little gain). The
 * 600 s default is ten dead times of the room plant: its ripple (5 °C) is what made it lose.
 */

export interface ModulationSuggestion {
  /** Duty band half width in the loop's unit (the config's `band`). */
  band: number;
  /** The same in duty units for the PID's kp: min(0.49, kp · band). */
  halfBandDuty: number;
  /** Time-proportioning window, s, if windows are preferred. */
  windowS: number;
  /** Expected ripple with that window at duty 0.5, peak to peak, loop unit. */
  windowRipple: number;
}

/** Shortest window suggested, s: two switches a minute at most. */
export const MIN_WINDOW_S = 30;

export function suggestModulation(
  model: Pick<FopdtModel, 'gain' | 'timeConstantS' | 'deadTimeS'>,
  kp: number,
  band: number,
): ModulationSuggestion {
  const gain = Math.abs(model.gain);
  const byRipple = (4 * model.timeConstantS * band) / gain;
  const windowS = Math.max(MIN_WINDOW_S, Math.min(model.deadTimeS, byRipple));
  return {
    band,
    halfBandDuty: Math.min(0.49, kp * band),
    windowS,
    windowRipple: (gain * Math.min(windowS, model.timeConstantS)) / (4 * model.timeConstantS),
  };
}
