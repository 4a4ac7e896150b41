/**
 * homeostat's controller in the benchmark: the loop's own controller step (`controllerOutput`,
 * which reconcile calls: PID, feedforward and its integrator re-basing) on each reading; on a
 * continuous actuator its output is the level, on a relay it is the duty of `timeProportion`
 * (modulation window) or of `dutyBand` (modulation band), evaluated every plant step (the daemon
 * wakes at `nextChangeMs`; 1 s is as fine).
 */
import { type ControllerResult, controllerOutput } from '../../../src/core/controller-output.js';
import { dutyBand } from '../../../src/core/duty-band.js';
import type { LoopSpec } from '../../../src/core/loop-spec.js';
import { pidInitialMemory } from '../../../src/core/pid.js';
import {
  type TimeProportioningMemory,
  type TimeProportioningParams,
  timeProportion,
  timeProportioningInitialMemory,
} from '../../../src/core/time-proportioning.js';
import type { Reading } from '../../../src/core/types.js';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';

/** Time-proportioning of the relay plants: 10 min window, 30 s minimum on and off. */
export const TIME_PROPORTIONING: TimeProportioningParams = {
  windowMs: 600_000,
  minOnMs: 30_000,
  minOffMs: 30_000,
};

/** Band modulation of the relay plants: half band 0.25 °C (kp · 0.25 in duty), as config's default bandC. */
export const BAND_C = 0.25;

/** The actuator's id in the benchmark's loop spec. */
const HEATER = 'heater';

export interface Variant {
  /** Derivative time as a fraction of the plant's dead time (0 = PI). */
  tdPerDeadTime: number;
  /** Give the PID the plant model (gain, ambient) as feedforward. */
  feedforward: boolean;
  /**
   * With `feedforward`: an outdoor sensor reads the plant's true ambient (the scenario's
   * disturbance included) at every reading, coupling 1. Default false (static model only).
   */
  measuredDisturbance?: boolean;
  /** Relay plants only: window and minimum times. Default `TIME_PROPORTIONING`. */
  timeProportioning?: TimeProportioningParams;
  /** Relay plants only: switch on a duty band of kp · bandC instead of windows (same minimum times). */
  bandC?: number;
}

/** A heating loop spec around the benchmark plant, with the SIMC tuning and the variant's feedforward. */
function benchLoopSpec({ plant, tuning }: ControllerContext, variant: Variant): LoopSpec {
  const model = { gain: plant.gain, ambient: plant.ambientC, deadTimeS: plant.deadTimeS };
  return {
    id: plant.id,
    quantity: 'temperature',
    controller: {
      type: 'pid',
      pid: { kp: tuning.kp, tiS: tuning.tiS, tdS: variant.tdPerDeadTime * plant.deadTimeS },
      ...(variant.feedforward ? { model } : {}),
      ...(variant.feedforward && variant.measuredDisturbance
        ? {
            disturbance: {
              sensorId: 'outdoor',
              coupling: 1,
              staleAfterMs: 60_000,
              plausibleMin: -55,
              plausibleMax: 125,
            },
          }
        : {}),
    },
    raise: { id: HEATER, kind: 'continuous', safeLevel: 0 },
    staleAfterMs: 120_000,
    plausibleMin: -55,
    plausibleMax: 125,
    deadband: 0,
    changeoverMs: 0,
    keepAliveMs: 60_000,
    retryInitialMs: 5_000,
    convergedBand: 0.5,
  };
}

export class HomeostatController implements BenchController {
  private readonly spec: LoopSpec;
  private readonly context: ControllerContext;
  private readonly measuredDisturbance: boolean;
  private control: Omit<ControllerResult, 'output'> & { regulating: boolean } = {
    regulating: false,
    pid: pidInitialMemory(),
    hysteresisOn: { raise: false, lower: false },
  };
  private output = 0;
  private relay: TimeProportioningMemory | undefined;
  private readonly timeProportioning: TimeProportioningParams;
  /** Band modulation's half band in duty units (kp · bandC); undefined: time-proportioning. */
  private readonly halfBand: number | undefined;

  constructor(context: ControllerContext, variant: Variant) {
    const { plant, tuning } = context;
    this.context = context;
    this.spec = benchLoopSpec(context, variant);
    this.measuredDisturbance = variant.feedforward && variant.measuredDisturbance === true;
    if (plant.actuator === 'relay') this.relay = timeProportioningInitialMemory();
    this.timeProportioning = variant.timeProportioning ?? TIME_PROPORTIONING;
    this.halfBand = variant.bandC === undefined ? undefined : tuning.kp * variant.bandC;
  }

  /** The outdoor sensor: the plant's ambient with the scenario's disturbance once it has hit. */
  private outdoorAt(atMs: number): Reading | undefined {
    if (!this.measuredDisturbance) return undefined;
    const { plant, disturbance } = this.context;
    const offsetC = disturbance !== undefined && atMs >= disturbance.atMs ? disturbance.offsetC : 0;
    return { value: plant.ambientC + offsetC, atMs };
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    const disturbance = this.outdoorAt(atMs);
    const result = controllerOutput(
      this.spec,
      { generation: 1, setpoint, mode: 'heat' },
      {
        reading: { value: measured, atMs },
        actuators: { [HEATER]: this.output },
        ...(disturbance ? { disturbance } : {}),
      },
      measured,
      this.control,
    );
    this.control = { regulating: true, pid: result.pid, hysteresisOn: result.hysteresisOn };
    this.output = result.output;
  }

  levelAt(atMs: number): number {
    if (this.relay === undefined) return this.output;
    if (this.halfBand !== undefined) {
      const result = dutyBand(this.output, this.relay, atMs, {
        ...this.timeProportioning,
        halfBand: this.halfBand,
      });
      this.relay = result.memory;
      return result.on ? 1 : 0;
    }
    const result = timeProportion(this.output, this.relay, atMs, this.timeProportioning);
    this.relay = result.memory;
    return result.on ? 1 : 0;
  }
}

function homeostat(id: string, variant: Variant, note: string): ControllerSpec {
  return {
    id,
    actuators:
      variant.bandC !== undefined
        ? ['relay']
        : variant.feedforward
          ? ['continuous']
          : ['continuous', 'relay'],
    note,
    create: (context) => new HomeostatController(context, variant),
  };
}

/** A homeostat variant on the actuators given (the feedforward section runs them on relays too). */
export function homeostatVariant(
  id: string,
  variant: Variant,
  actuators: ControllerSpec['actuators'],
  note: string,
): ControllerSpec {
  return { id, actuators, note, create: (context) => new HomeostatController(context, variant) };
}

export const HOMEOSTAT: readonly ControllerSpec[] = [
  homeostat(
    'homeostat PI',
    { tdPerDeadTime: 0, feedforward: false },
    "homeostat controllerOutput (the loop's PID step), SIMC kp and Ti, Td 0",
  ),
  homeostat(
    'homeostat PID',
    { tdPerDeadTime: 1 / 3, feedforward: false },
    'homeostat controllerOutput, Td = θ/3',
  ),
  homeostat(
    'homeostat PI+ff',
    { tdPerDeadTime: 0, feedforward: true },
    'homeostat controllerOutput, Td 0, model {gain, ambient} as feedforward (setpoint changes absorbed by the integrator)',
  ),
  homeostat('homeostat PID+ff', { tdPerDeadTime: 1 / 3, feedforward: true }, 'as PI+ff with Td = θ/3'),
  homeostat(
    'homeostat PI band',
    { tdPerDeadTime: 0, feedforward: false, bandC: BAND_C },
    `relay plants: homeostat PI, relay by dutyBand (modulation band), half band kp · ${BAND_C} °C`,
  ),
  homeostat(
    'homeostat PID band',
    { tdPerDeadTime: 1 / 3, feedforward: false, bandC: BAND_C },
    `relay plants: homeostat PID (Td = θ/3), relay by dutyBand, half band kp · ${BAND_C} °C`,
  ),
];

/** homeostat PI on a relay with another time-proportioning window (same minimum on/off times). */
export function homeostatRelayWindow(windowS: number): ControllerSpec {
  const timeProportioning = { ...TIME_PROPORTIONING, windowMs: windowS * 1000 };
  return homeostat(
    `homeostat PI, ${windowS} s`,
    { tdPerDeadTime: 0, feedforward: false, timeProportioning },
    `homeostat PI, time-proportioning window ${windowS} s`,
  );
}
