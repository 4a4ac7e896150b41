/**
 * The plants of the control benchmark: FOPDT models (gain K, time constant τ, dead time θ,
 * ambient) with the setpoint each is driven to, and the SIMC tuning computed from the model.
 *
 * Setpoints are chosen so the holding output stays below 0.6 and the −5 °C load disturbance
 * (scenario B) can still be compensated without saturating: u = (r − ambient + 5) / K < 1.
 */

/** One benchmark plant. Temperatures in °C, times in seconds. */
export interface PlantSpec {
  id: string;
  /** What it stands for, printed in the report. */
  label: string;
  /** Steady-state rise at full output, °C. */
  gain: number;
  ambientC: number;
  timeConstantS: number;
  deadTimeS: number;
  /** Setpoint of the step from ambient (scenario A) and of the disturbance test (B). */
  setpointC: number;
  /** `relay`: on/off actuator (homeostat drives it by time-proportioning). */
  actuator: 'continuous' | 'relay';
  /** Simulated time after each event (step, disturbance), long enough for every loop to settle. */
  horizonS: number;
  /** Settling band: |e| must stay within it, °C. */
  settlingBandC: number;
}

/** PI(D) settings in ISA form, as homeostat's `PidParams` takes them. */
export interface Tuning {
  kp: number;
  tiS: number;
  tdS: number;
}

const HOUR_S = 3600;

/**
 * Continuous plants: a room with a modulating heater (the plant of the targets), and a fast,
 * a slow and a dead-time-dominated one.
 */
export const CONTINUOUS_PLANTS: readonly PlantSpec[] = [
  {
    id: 'room',
    label: 'room, modulating heater (K 20, τ 600 s, θ 60 s)',
    gain: 20,
    ambientC: 10,
    timeConstantS: 600,
    deadTimeS: 60,
    setpointC: 20,
    actuator: 'continuous',
    horizonS: 2 * HOUR_S,
    settlingBandC: 0.2,
  },
  {
    id: 'fast',
    label: 'fast (K 10, τ 120 s, θ 10 s)',
    gain: 10,
    ambientC: 10,
    timeConstantS: 120,
    deadTimeS: 10,
    setpointC: 14,
    actuator: 'continuous',
    horizonS: 2 * HOUR_S,
    settlingBandC: 0.2,
  },
  {
    id: 'slow',
    label: 'slow (K 15, τ 3600 s, θ 120 s)',
    gain: 15,
    ambientC: 10,
    timeConstantS: 3600,
    deadTimeS: 120,
    setpointC: 18,
    actuator: 'continuous',
    horizonS: 4 * HOUR_S,
    settlingBandC: 0.2,
  },
  {
    id: 'deadtime',
    label: 'dead-time dominated (K 10, τ 200 s, θ 300 s)',
    gain: 10,
    ambientC: 10,
    timeConstantS: 200,
    deadTimeS: 300,
    setpointC: 14,
    actuator: 'continuous',
    horizonS: 2 * HOUR_S,
    settlingBandC: 0.2,
  },
];

/**
 * Relay plants: the room and the slow plant with an on/off heater. A relay cannot hold a value
 * tighter than its own ripple, so their settling band is wider (printed with the table).
 */
export const RELAY_PLANTS: readonly PlantSpec[] = [
  {
    ...CONTINUOUS_PLANTS[0]!,
    id: 'room-relay',
    label: 'room, relay heater',
    actuator: 'relay',
    settlingBandC: 0.5,
  },
  {
    ...CONTINUOUS_PLANTS[2]!,
    id: 'slow-relay',
    label: 'slow, relay heater',
    actuator: 'relay',
    settlingBandC: 0.5,
  },
];

export const PLANTS: readonly PlantSpec[] = [...CONTINUOUS_PLANTS, ...RELAY_PLANTS];

/**
 * SIMC PI tuning (Skogestad 2003) with the closed-loop time constant τc = θ:
 *   kp = τ / (K·(τc + θ)),  Ti = min(τ, 4·(τc + θ)),  Td = 0.
 * A plant without dead time would give τc = 0 and an infinite gain, so τc is at least 1 s.
 */
export function simcTuning(plant: Pick<PlantSpec, 'gain' | 'timeConstantS' | 'deadTimeS'>): Tuning {
  const closedLoopS = Math.max(plant.deadTimeS, 1);
  const kp = plant.timeConstantS / (plant.gain * (closedLoopS + plant.deadTimeS));
  const tiS = Math.min(plant.timeConstantS, 4 * (closedLoopS + plant.deadTimeS));
  return { kp, tiS, tdS: 0 };
}

/** Steady-state output that holds `setpointC` against an extra forcing `offsetC` (a disturbance). */
export function holdingOutput(plant: PlantSpec, setpointC: number, offsetC = 0): number {
  return (setpointC - plant.ambientC - offsetC) / plant.gain;
}
