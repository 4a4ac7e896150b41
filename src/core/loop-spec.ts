import type { DutyBandParams } from './duty-band.js';
import type { EffectWatchSpec } from './effect-watch.js';
import type { DisturbanceSpec, PlantModel } from './feedforward.js';
import type { HysteresisParams } from './hysteresis.js';
import type { InterlockSpec } from './interlock.js';
import type { CutoffSpec } from './monitors/cutoff.js';
import type { RunawayWatchSpec } from './monitors/runaway-watch.js';
import type { StuckWatchSpec } from './monitors/stuck-watch.js';
import type { PidParams } from './pid.js';
import type { SensorSetSpec } from './sensor-set.js';
import type { TimeProportioningParams } from './time-proportioning.js';
import type { Direction, Mode, Quantity } from './types.js';

/** One actuator as a loop sees it (built from config by the daemon). */
export interface ActuatorSpec {
  id: string;
  kind: 'relay' | 'continuous';
  /** Level commanded on every fault, in mode off and on shutdown: 0 (off) unless configured. */
  safeLevel: number;
  /**
   * Relays only: minimum on/off times (every controller) and the time-proportioning window
   * (PID without `band`). Default: window 600 s, no minimum times.
   */
  timeProportioning?: TimeProportioningParams;
  /**
   * Relays under a PID only: switch on a band of the duty around 0.5 (duty-band.ts) instead of
   * time-proportioning windows; `timeProportioning.windowMs` is then unused, its minimum times
   * still hold. Ignored under a hysteresis controller. Default: absent (windows).
   */
  band?: Pick<DutyBandParams, 'halfBand'>;
  /**
   * Relays only: the file chose no modulation (neither `modulation` nor `windowS`), so the band
   * above is only the default; a tuning's suggested modulation may replace it
   * (core/tuning/tuning-modulation.ts). Absent: the file's choice, kept.
   */
  modulationDefaulted?: true;
  /**
   * Longest time continuously above 0, ms; reaching it latches a fault (monitors/max-on-time.ts).
   * Only for actuators whose safe level is 0. Default: none.
   */
  maxOnMs?: number;
  /**
   * Relays only: most switch-ons in any hour; a further start waits (monitors/start-cap.ts). Only
   * for relays whose safe level is 0. Default: none.
   */
  maxStartsPerHour?: number;
}

export type ControllerSpec =
  | {
      type: 'pid';
      /** Tuning; the output range follows from the mode (heater 0..1, cooler −1..0, both −1..1). */
      pid: Omit<PidParams, 'outputMin' | 'outputMax' | 'errorDeadband'>;
      /**
       * Split range only: the lower side's gains (a cooler is another plant than the heater: a
       * fridge and a heat mat differ 10× in gain). The PID runs with them while the lower side
       * acts (controller-output.ts: sideGains); the rest of `pid` (maxGapS) serves both. Absent:
       * `pid` serves both sides.
       */
      lowerPid?: LowerPidParams;
      /** Optional static plant model for feedforward (feedforward.ts). */
      model?: PlantModel;
      /** Optional disturbance sensor whose reading feeds forward through `model` (needs it). */
      disturbance?: DisturbanceSpec;
    }
  | { type: 'hysteresis'; hysteresis: HysteresisParams };

/** The lower side's gains (ControllerSpec 'pid'): b absent takes `pid`'s; filter and tracking their defaults. */
export type LowerPidParams = Pick<PidParams, 'kp' | 'tiS' | 'tdS'> &
  Partial<Pick<PidParams, 'setpointWeight' | 'derivativeFilterS' | 'trackingTimeS'>>;

/** How often one sensor gives a reading (config: its periodS), and whether only on change. */
export interface SensorCadence {
  sensorId: string;
  periodMs: number;
  /** It reports only when its value changes, its device showing it is alive otherwise (liveness). */
  reportsOnChange: boolean;
}

/** Everything static about a loop: what it measures, drives and how. Pure data. */
export interface LoopSpec {
  id: string;
  quantity: Quantity;
  controller: ControllerSpec;
  raise?: ActuatorSpec;
  lower?: ActuatorSpec;
  /**
   * Several sensors combined into the loop's reading (sensor-set.ts); absent: the loop's one
   * sensor. `unit` (the loop's, '' for none) is for the status' summary only.
   */
  sensorSet?: SensorSetSpec & { unit: string };
  /**
   * How often the loop's sensors (its one, or each of its set) give a reading: an autotune needs
   * a steady stream (tuning/reading-cadence.ts). Absent: not known, not checked.
   */
  sensorCadence?: SensorCadence[];
  /**
   * A reading older than this (ms) counts as missing → safe state. A set's members are each
   * judged by their own limit (SensorSetSpec.staleAfterMs), capped by this one.
   */
  staleAfterMs: number;
  plausibleMin: number;
  plausibleMax: number;
  /** Split range: no action while |setpoint − measured| ≤ deadband / 2. */
  deadband: number;
  /** Minimum time (ms) between one direction's actuator going idle and the other's starting. */
  changeoverMs: number;
  /** Re-assert the wanted state at least this often (ms), even when it is confirmed. */
  keepAliveMs: number;
  /** First retry delay (ms) for an unconfirmed command; doubles per attempt up to keepAliveMs. */
  retryInitialMs: number;
  /** |setpoint − measured| within this counts as converged (unit of the quantity). */
  convergedBand: number;
  /** Sensors that pause the loop (safe state) while tripped. Default none. */
  interlocks?: InterlockSpec[];
  /** Latch a fault when full output has no effect (see effect-watch.ts). Default off. */
  effectWatch?: EffectWatchSpec;
  /** Absolute limits the loop never pushes past; latches a fault (monitors/max-on-time.ts). Default off. */
  cutoff?: CutoffSpec;
  /** Latch a fault when the value moves on with its actuator off (welded relay). Default off. */
  stuckWatch?: StuckWatchSpec;
  /** Latch a fault when, once converged, the value stays out at saturated output. Default off. */
  runawayWatch?: RunawayWatchSpec;
}

/** Which directions a mode lets act. */
export function directionsForMode(mode: Mode): Record<Direction, boolean> {
  switch (mode) {
    case 'off':
      return { raise: false, lower: false };
    case 'heat':
    case 'humidify':
      return { raise: true, lower: false };
    case 'cool':
    case 'dehumidify':
      return { raise: false, lower: true };
    case 'heat_cool':
    case 'auto':
      return { raise: true, lower: true };
  }
}

/** The actuators of a loop with their direction, raise first. */
export function loopActuators(spec: LoopSpec): { direction: Direction; actuator: ActuatorSpec }[] {
  const list: { direction: Direction; actuator: ActuatorSpec }[] = [];
  if (spec.raise) list.push({ direction: 'raise', actuator: spec.raise });
  if (spec.lower) list.push({ direction: 'lower', actuator: spec.lower });
  return list;
}
