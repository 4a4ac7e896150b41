/**
 * homeostat's controller in the benchmark: `pidStep` on each reading; on a continuous
 * actuator its output is the level, on a relay it is the duty of `timeProportion` (modulation
 * window) or of `dutyBand` (modulation band), evaluated every plant step (the daemon wakes at
 * `nextChangeMs`; 1 s is as fine).
 */
import { dutyBand } from '../../../src/core/duty-band.js';
import { setpointFeedforward } from '../../../src/core/feedforward.js';
import { type PidMemory, type PidParams, pidInitialMemory, pidStep } from '../../../src/core/pid.js';
import {
  type TimeProportioningMemory,
  type TimeProportioningParams,
  timeProportion,
  timeProportioningInitialMemory,
} from '../../../src/core/time-proportioning.js';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';

/** Time-proportioning of the relay plants: 10 min window, 30 s minimum on and off. */
export const TIME_PROPORTIONING: TimeProportioningParams = {
  windowMs: 600_000,
  minOnMs: 30_000,
  minOffMs: 30_000,
};

/** Band modulation of the relay plants: half band 0.25 °C (kp · 0.25 in duty), as config's default bandC. */
export const BAND_C = 0.25;

interface Variant {
  /** Derivative time as a fraction of the plant's dead time (0 = PI). */
  tdPerDeadTime: number;
  /** Give the PID the plant model as setpoint feedforward. */
  feedforward: boolean;
  /** Relay plants only: window and minimum times. Default `TIME_PROPORTIONING`. */
  timeProportioning?: TimeProportioningParams;
  /** Relay plants only: switch on a duty band of kp · bandC instead of windows (same minimum times). */
  bandC?: number;
}

class HomeostatController implements BenchController {
  private readonly params: PidParams;
  private readonly feedforward: number | undefined;
  private memory: PidMemory = pidInitialMemory();
  private output = 0;
  private relay: TimeProportioningMemory | undefined;
  private readonly timeProportioning: TimeProportioningParams;
  /** Band modulation's half band in duty units (kp · bandC); undefined: time-proportioning. */
  private readonly halfBand: number | undefined;

  constructor({ plant, tuning, setpoint }: ControllerContext, variant: Variant) {
    this.params = {
      kp: tuning.kp,
      tiS: tuning.tiS,
      tdS: variant.tdPerDeadTime * plant.deadTimeS,
      outputMin: 0,
      outputMax: 1,
    };
    this.feedforward = variant.feedforward
      ? setpointFeedforward({ gain: plant.gain, ambient: plant.ambientC }, setpoint)
      : undefined;
    if (plant.actuator === 'relay') this.relay = timeProportioningInitialMemory();
    this.timeProportioning = variant.timeProportioning ?? TIME_PROPORTIONING;
    this.halfBand = variant.bandC === undefined ? undefined : tuning.kp * variant.bandC;
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    const result = pidStep(this.params, this.memory, {
      setpoint,
      measured,
      atMs,
      ...(this.feedforward === undefined ? {} : { feedforward: this.feedforward }),
    });
    this.memory = result.memory;
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

export const HOMEOSTAT: readonly ControllerSpec[] = [
  homeostat(
    'homeostat PI',
    { tdPerDeadTime: 0, feedforward: false },
    'homeostat pidStep, SIMC kp and Ti, Td 0',
  ),
  homeostat('homeostat PID', { tdPerDeadTime: 1 / 3, feedforward: false }, 'homeostat pidStep, Td = θ/3'),
  homeostat(
    'homeostat PI+ff',
    { tdPerDeadTime: 0, feedforward: true },
    'homeostat pidStep, Td 0, feedforward = setpointFeedforward({gain, ambient}, setpoint)',
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
