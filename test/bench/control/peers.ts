/**
 * The controllers Node users install today, driven unchanged through their public API, and
 * Home Assistant's generic_thermostat rule. All PIDs get the same SIMC tuning, converted to
 * each package's parameters; their outputs are clamped to 0..1 by the loop (the actuator
 * saturates). No package gets a hand-set bias or integrator preload.
 *
 * Two packages read the wall clock themselves (`Date.now()`, `new Date()`); in simulation the
 * wall clock is replaced by the simulated one for the duration of each call, so they see the
 * time they would see in real life, without any change to them.
 */
import { createRequire } from 'node:module';
import NodePidController from 'node-pid-controller';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';
import { REGULAR_PERIOD_S } from './scenarios.js';

const require = createRequire(import.meta.url);

// --- simulated wall clock ----------------------------------------------------------------

const RealDate = Date;
let simulatedNowMs = 0;

/** `Date` as the packages see it inside `atSimulatedTime`: `now()` and `new Date()` are simulated. */
class SimulatedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(simulatedNowMs);
    else super(...(args as [string | number | Date]));
  }
  static override now(): number {
    return simulatedNowMs;
  }
}

/** Runs `fn` with the global wall clock reading `nowMs`, then restores the real one. */
function atSimulatedTime<T>(nowMs: number, fn: () => T): T {
  simulatedNowMs = nowMs;
  globalThis.Date = SimulatedDate as DateConstructor;
  try {
    return fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

// --- node-pid-controller (Philmod) ------------------------------------------------------

/**
 * node-pid-controller 1.0.1: u = k_p·e + k_i·Σe·dt + k_d·Δe/dt, dt from `Date.now()` when the
 * `dt` option is not set (the first call uses dt = 1). No output limits; its only windup guard
 * is `i_max` (bound on Σe·dt), set so the integral term alone can reach full output: 1/k_i.
 */
class NodePidControllerPeer implements BenchController {
  private readonly pid: NodePidController;
  private output = 0;

  constructor({ tuning }: ControllerContext) {
    const kI = tuning.tiS > 0 ? tuning.kp / tuning.tiS : 0;
    this.pid = new NodePidController({
      k_p: tuning.kp,
      k_i: kI,
      k_d: tuning.kp * tuning.tdS,
      ...(kI > 0 ? { i_max: 1 / kI } : {}),
    });
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    this.pid.setTarget(setpoint);
    this.output = atSimulatedTime(atMs, () => this.pid.update(measured));
  }

  levelAt(): number {
    return this.output;
  }
}

// --- pid-controller (Rhys Williams, port of Arduino PID v1.0.1) ---------------------------

interface ArduinoPid {
  setInput(value: number): void;
  setPoint(value: number): void;
  compute(): boolean;
  getOutput(): number;
  setSampleTime(ms: number): void;
  setOutputLimits(min: number, max: number): void;
  setMode(mode: string): void;
}
type ArduinoPidConstructor = new (
  input: number,
  setpoint: number,
  kp: number,
  ki: number,
  kd: number,
  direction: string,
) => ArduinoPid;
const ArduinoPidClass = require('pid-controller') as ArduinoPidConstructor;

/**
 * pid-controller 1.0.5: Ki and Kd in per-second units, scaled by a fixed `SampleTime` (set to
 * the regular reading period, 10 s); `compute()` reads `new Date()` and does nothing when less
 * than SampleTime has passed since its last computation (so with irregular readings some are
 * skipped, and the others are integrated as if 10 s apart). Output limits 0..1 via
 * `setOutputLimits`; derivative on measurement. Unlike the Arduino library it ports, it does
 * not clamp its integral term while running (windup), and that is measured as is.
 */
class ArduinoPidPeer implements BenchController {
  private readonly pid: ArduinoPid;

  constructor({ tuning, plant, setpoint, startMs }: ControllerContext) {
    const ki = tuning.tiS > 0 ? tuning.kp / tuning.tiS : 0;
    this.pid = atSimulatedTime(startMs, () => {
      const pid = new ArduinoPidClass(
        plant.ambientC,
        setpoint,
        tuning.kp,
        ki,
        tuning.kp * tuning.tdS,
        'direct',
      );
      pid.setSampleTime(REGULAR_PERIOD_S * 1000);
      pid.setOutputLimits(0, 1);
      pid.setMode('auto');
      return pid;
    });
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    this.pid.setInput(measured);
    this.pid.setPoint(setpoint);
    atSimulatedTime(atMs, () => this.pid.compute());
  }

  levelAt(): number {
    return this.pid.getOutput();
  }
}

// --- liquid-pid (Péter Márton) ----------------------------------------------------------

interface LiquidPid {
  calculate(actualTemperature: number): number;
  setPoint(temp: number): number | undefined;
}
type LiquidPidConstructor = new (options: {
  temp: { ref: number };
  Pmax: number;
  Kp: number;
  Ki: number;
  Kd: number;
}) => LiquidPid;
const LiquidPidClass = require('liquid-pid') as LiquidPidConstructor;

/**
 * liquid-pid 1.0.0: no notion of time, gains are per call. Its internal output U is 0..1000
 * (P, I, D each clamped to ±1000), returned as U/1000·Pmax; with Pmax 1 the gains are
 * ×1000: Kp = 1000·kp, Ki = 1000·kp·T/Ti, Kd = 1000·kp·Td/T with T the regular period (10 s).
 * Options are read with `||`, so Kd = 0 silently becomes its default 9 (and `tune()` returns
 * early for any numeric argument), i.e. a PI runs with Td = 9·T/(1000·kp).
 */
class LiquidPidPeer implements BenchController {
  private readonly pid: LiquidPid;
  private output = 0;

  constructor({ tuning, setpoint }: ControllerContext) {
    const periodS = REGULAR_PERIOD_S;
    this.pid = new LiquidPidClass({
      temp: { ref: setpoint },
      Pmax: 1,
      Kp: 1000 * tuning.kp,
      Ki: tuning.tiS > 0 ? (1000 * tuning.kp * periodS) / tuning.tiS : 0,
      Kd: (1000 * tuning.kp * tuning.tdS) / periodS,
    });
  }

  onReading(measured: number, setpoint: number): void {
    this.pid.setPoint(setpoint);
    this.output = this.pid.calculate(measured);
  }

  levelAt(): number {
    return this.output;
  }
}

// --- Home Assistant generic_thermostat ----------------------------------------------------

/** generic_thermostat's default tolerances, °C. */
export const HA_TOLERANCE_C = 0.3;

/**
 * Home Assistant generic_thermostat's heating rule (`_async_control_heating`), run on every
 * reading: too_cold = target > current + cold_tolerance, too_hot = target < current −
 * hot_tolerance; an active heater turns off when too hot, an idle one on when too cold.
 * Defaults: tolerances 0.3, min_cycle_duration 0, no keep-alive (no effect in simulation).
 */
export function haHeaterOn(wasOn: boolean, setpoint: number, measured: number): boolean {
  const tooCold = setpoint > measured + HA_TOLERANCE_C;
  const tooHot = setpoint < measured - HA_TOLERANCE_C;
  if (wasOn) return !tooHot;
  return tooCold;
}

class HaHysteresisPeer implements BenchController {
  private on = false;

  onReading(measured: number, setpoint: number): void {
    this.on = haHeaterOn(this.on, setpoint, measured);
  }

  levelAt(): number {
    return this.on ? 1 : 0;
  }
}

// --- specs ---------------------------------------------------------------------------------

function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

/** Versions of the peer packages actually loaded. */
export function peerVersions(): Record<string, string> {
  return Object.fromEntries(
    ['node-pid-controller', 'pid-controller', 'liquid-pid'].map((name) => [name, packageVersion(name)]),
  );
}

export const PEERS: readonly ControllerSpec[] = [
  {
    id: 'node-pid-controller',
    actuators: ['continuous'],
    note: 'node-pid-controller: k_p=kp, k_i=kp/Ti, k_d=kp·Td, dt from its Date.now() (simulated), i_max=1/k_i',
    create: (context) => new NodePidControllerPeer(context),
  },
  {
    id: 'pid-controller',
    actuators: ['continuous'],
    note: "pid-controller: (kp, kp/Ti, kp·Td), setSampleTime(10 000 ms), setOutputLimits(0, 1), 'direct', 'auto'",
    create: (context) => new ArduinoPidPeer(context),
  },
  {
    id: 'liquid-pid',
    actuators: ['continuous'],
    note: 'liquid-pid: Pmax 1, Kp=1000·kp, Ki=1000·kp·10 s/Ti, Kd=1000·kp·Td/10 s (Kd 0 becomes its default 9)',
    create: (context) => new LiquidPidPeer(context),
  },
  {
    id: 'HA hysteresis',
    actuators: ['relay'],
    note: 'Home Assistant generic_thermostat rule, cold/hot tolerance 0.3 °C, evaluated on every reading',
    create: () => new HaHysteresisPeer(),
  },
];
