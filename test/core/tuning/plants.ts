import type { TestPlant } from './relay-driver.js';

/**
 * The five plants of issue 12's autotune targets. The second-order plant is a FOPDT followed by
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
