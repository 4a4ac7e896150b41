/**
 * Spec builders and small fakes for the pure-core tests. Every test passes time explicitly as
 * `nowMs`, counted from `T0` (a fixed instant, so failures print stable numbers).
 */
import type { ActuatorSpec, LoopSpec } from '../../src/core/loop-spec.js';
import {
  initialLoopMemory,
  type LoopDesired,
  type LoopMemory,
  type LoopObserved,
  type ReconcileResult,
  reconcile,
} from '../../src/core/reconcile.js';
import type { ActuatorLevel, Condition, ConditionType, Mode, Reading } from '../../src/core/types.js';

/** Fake clock origin: 2025-01-01T06:00:00Z. */
export const T0 = Date.UTC(2025, 0, 1, 6, 0, 0);

/** Seconds → ms. */
export const s = (seconds: number): number => seconds * 1_000;
/** Minutes → ms. */
export const min = (minutes: number): number => minutes * 60_000;
/** The fake clock: `at(s(30))` is 30 s after T0. */
export const at = (offsetMs: number): number => T0 + offsetMs;

export function reading(value: number, atMs: number): Reading {
  return { value, atMs };
}

export function desired(mode: Mode, setpoint: number, generation = 1): LoopDesired {
  return { generation, setpoint, mode };
}

/** Timing and safety limits shared by every example loop (°C). */
const common = {
  quantity: 'temperature',
  staleAfterMs: min(5),
  plausibleMin: -40,
  plausibleMax: 85,
  deadband: 0,
  changeoverMs: 0,
  keepAliveMs: min(10),
  retryInitialMs: s(10),
  convergedBand: 0.5,
} as const;

export function relay(
  id: string,
  timing: Partial<NonNullable<ActuatorSpec['timeProportioning']>> = {},
): ActuatorSpec {
  return {
    id,
    kind: 'relay',
    safeLevel: 0,
    timeProportioning: { windowMs: min(10), minOnMs: 0, minOffMs: 0, ...timing },
  };
}

/** (a) A room heater on a relay: PID (SIMC-like tuning) through 10-min time-proportioning windows. */
export function heaterRelayLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return {
    ...common,
    id: 'room',
    controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0 } },
    raise: relay('heater'),
    ...overrides,
  };
}

/**
 * (b) Split range: a heater relay and a compressor relay (minimum off 300 s), a 1 °C deadband
 * between them and a 5-min changeover delay.
 */
export function splitRangeLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return {
    ...common,
    id: 'cellar',
    controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0 } },
    raise: relay('heater'),
    lower: relay('compressor', { minOffMs: s(300) }),
    deadband: 1,
    changeoverMs: min(5),
    ...overrides,
  };
}

/** (c) A heater switched on/off by hysteresis (generic_thermostat rule, tolerances 0.3 °C). */
export function hysteresisHeaterLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return {
    ...common,
    id: 'greenhouse',
    controller: { type: 'hysteresis', hysteresis: { coldTolerance: 0.3, hotTolerance: 0.3 } },
    raise: relay('heater'),
    ...overrides,
  };
}

/** (d) A continuous actuator (e.g. a 0..1 dimmer on a heating mat), PID. */
export function continuousLoop(overrides: Partial<LoopSpec> = {}): LoopSpec {
  return {
    ...common,
    id: 'terrarium',
    controller: { type: 'pid', pid: { kp: 0.2, tiS: 900, tdS: 0 } },
    raise: { id: 'mat', kind: 'continuous', safeLevel: 0 },
    ...overrides,
  };
}

/** Every example loop, for properties that must hold whatever the loop. */
export const allLoops: Array<{ name: string; spec: LoopSpec; mode: Mode }> = [
  { name: 'heater relay PID', spec: heaterRelayLoop(), mode: 'heat' },
  { name: 'split range', spec: splitRangeLoop(), mode: 'heat_cool' },
  { name: 'hysteresis heater', spec: hysteresisHeaterLoop(), mode: 'heat' },
  { name: 'continuous', spec: continuousLoop(), mode: 'heat' },
];

export function observed(
  reading: Reading | undefined,
  actuators: Record<string, ActuatorLevel>,
): LoopObserved {
  return reading === undefined ? { actuators } : { reading, actuators };
}

export function condition(result: ReconcileResult, type: ConditionType): Condition {
  const found = result.status.conditions.find((c) => c.type === type);
  if (!found) throw new Error(`condition ${type} missing`);
  return found;
}

/**
 * A loop driven against obedient actuators: each cycle's wanted levels become the next cycle's
 * observed levels (what a working relay reports back).
 */
export class Harness {
  memory: LoopMemory = initialLoopMemory();
  actuators: Record<string, ActuatorLevel> = {};
  last?: ReconcileResult;

  constructor(
    readonly spec: LoopSpec,
    public want: LoopDesired,
  ) {}

  /** One cycle at `nowMs` with a reading of `value` taken at `readingAtMs` (default: now). */
  cycle(nowMs: number, value: number | undefined, readingAtMs = nowMs): ReconcileResult {
    const r = value === undefined ? undefined : reading(value, readingAtMs);
    const result = reconcile(this.spec, this.want, observed(r, this.actuators), this.memory, nowMs);
    this.memory = result.memory;
    this.actuators = { ...this.actuators, ...result.wanted };
    this.last = result;
    return result;
  }
}

export interface CycleRecord {
  atMs: number;
  result: ReconcileResult;
}

/**
 * Runs a loop event-driven, like the runtime: a sensor read every `readingEveryS` seconds
 * (value from `valueAtS`) triggers a cycle, and so does each result's nextWakeMs, from `fromS` to
 * `untilS` seconds after T0. Actuators obey.
 */
export function simulate(
  harness: Harness,
  valueAtS: (atS: number) => number,
  untilS: number,
  readingEveryS = 30,
  fromS = 0,
): CycleRecord[] {
  const records: CycleRecord[] = [];
  const everyMs = s(readingEveryS);
  let nowMs = T0 + s(fromS);
  while (nowMs <= T0 + s(untilS)) {
    const readingAtMs = T0 + Math.floor((nowMs - T0) / everyMs) * everyMs;
    const result = harness.cycle(nowMs, valueAtS((readingAtMs - T0) / 1000), readingAtMs);
    if (result.nextWakeMs < nowMs) throw new Error(`nextWakeMs ${result.nextWakeMs} before now ${nowMs}`);
    records.push({ atMs: nowMs, result });
    nowMs = Math.min(Math.max(result.nextWakeMs, nowMs + 1), readingAtMs + everyMs);
  }
  return records;
}
