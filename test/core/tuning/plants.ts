import type { TestPlant } from './relay-driver.js';

/**
 * The five plants of the autotune's targets. The second-order plant is a FOPDT followed by
 * a second lag (FopdtPlant has one lag); its "true" FOPDT is Skogestad's half rule:
 * τ = τ1 + τ2/2, θ = θ0 + τ2/2.
 */
export const TUNING_PLANTS: readonly (TestPlant & { trueTimeConstantS: number; trueDeadTimeS: number })[] = [
  { id: 'room', gain: 20, timeConstantS: 600, deadTimeS: 60, ambient: 10, setpoint: 20 },
  { id: 'slow greenhouse', gain: 15, timeConstantS: 3600, deadTimeS: 120, ambient: 10, setpoint: 18 },
  { id: 'large water mass', gain: 30, timeConstantS: 14400, deadTimeS: 300, ambient: 10, setpoint: 20 },
  {
    id: 'second-order',
    gain: 20,
    timeConstantS: 600,
    deadTimeS: 30,
    secondLagS: 150,
    ambient: 10,
    setpoint: 20,
  },
  { id: 'kettle (θ > τ)', gain: 80, timeConstantS: 90, deadTimeS: 120, ambient: 20, setpoint: 60 },
].map((p) => ({
  ...p,
  trueTimeConstantS: p.timeConstantS + (p.secondLagS ?? 0) / 2,
  trueDeadTimeS: p.deadTimeS + (p.secondLagS ?? 0) / 2,
}));

/**
 * The two review plants, which the tuning above never saw: a kettle that is fast
 * but lag-dominated (K 80, τ 300 s, θ 20 s: the relay swings it hard, the dead time is short),
 * and a second-order plant whose second lag is half its first (τ1 300 s, τ2 150 s, θ0 10 s:
 * half rule τ 375 s, θ 85 s, so most of the apparent dead time is lag). The review's own
 * definitions are not in the repository (nothing under test/bench or src/drivers/sim names a
 * kettle of τ 300 s or another second-order plant); these follow its figures and the brief.
 */
export const REVIEW_PLANTS: readonly (TestPlant & { trueTimeConstantS: number; trueDeadTimeS: number })[] = [
  { id: 'kettle (τ 300 s)', gain: 80, timeConstantS: 300, deadTimeS: 20, ambient: 20, setpoint: 60 },
  {
    id: 'second-order (τ2 = τ1/2)',
    gain: 20,
    timeConstantS: 300,
    deadTimeS: 10,
    secondLagS: 150,
    ambient: 10,
    setpoint: 20,
  },
].map((p) => ({
  ...p,
  trueTimeConstantS: p.timeConstantS + (p.secondLagS ?? 0) / 2,
  trueDeadTimeS: p.deadTimeS + (p.secondLagS ?? 0) / 2,
}));
