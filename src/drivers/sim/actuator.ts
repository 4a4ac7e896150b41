import type { ActuatorLevel } from '../../core/types.js';
import type { ActuatorDriver } from '../types.js';
import type { FopdtPlant } from './plant.js';

/** Options of the simulated actuators. */
export interface SimActuatorOptions<L extends number = number> {
  /** Also the plant input's name. */
  id: string;
  plant: FopdtPlant;
  /** Steady-state effect on the plant at level 1, in the plant's unit (negative for a cooler). */
  gain: number;
  /** The plant's clock (the daemon's monotonic one); writes take effect on the plant at this time. */
  nowMs: () => number;
  /** Level before the first write, already in effect at the plant. Default 0. */
  initialLevel?: L;
}

/**
 * Shared behaviour: drives a plant input, records every write, and has test hooks to make
 * writes fail or `observe()` report something other than the truth.
 */
abstract class SimActuator implements ActuatorDriver {
  readonly id: string;
  readonly simulated = true;
  abstract readonly kind: 'relay' | 'continuous';
  /** Every level passed to `write()`, in order, including calls that were rejected. */
  readonly writes: number[] = [];
  protected level: number;
  private readonly plant: FopdtPlant;
  private readonly nowMs: () => number;
  private observedOverride: ActuatorLevel | null = null;
  private writeError: Error | null = null;
  private stopped = false;

  constructor(opts: SimActuatorOptions) {
    const initialLevel = opts.initialLevel ?? 0;
    this.validate(initialLevel, opts.id);
    this.id = opts.id;
    this.plant = opts.plant;
    this.nowMs = opts.nowMs;
    // A driver replaced on reload takes over the same plant input, at the level it has (the
    // simulated world keeps running across reloads).
    if (opts.plant.hasInput(opts.id)) {
      opts.plant.setInputGain(opts.id, opts.gain);
      this.level = opts.plant.inputLevel(opts.id);
    } else {
      opts.plant.addInput(opts.id, opts.gain, initialLevel);
      this.level = initialLevel;
    }
  }

  /** The actual level, unless a test override is set. */
  async observe(): Promise<ActuatorLevel> {
    return this.observedOverride === null ? this.level : this.observedOverride;
  }

  /** Takes writes again after a `stop()` (a daemon restarted on the same drivers). */
  async start(): Promise<void> {
    this.stopped = false;
  }

  /**
   * Refuses further writes, as a real driver does once it let go of its device. The plant
   * input stays at its level: the simulated world keeps running, and a driver replacing this
   * one on reload takes the input over. Idempotent.
   */
  async stop(): Promise<void> {
    this.stopped = true;
  }

  /**
   * Sets the plant input at `nowMs()`. Rejects with RangeError for a level this kind does not
   * accept, and with an Error once stopped.
   */
  async write(level: number): Promise<void> {
    this.writes.push(level);
    this.validate(level, this.id);
    if (this.stopped) throw new Error(`actuator ${this.id}: driver stopped`);
    if (this.writeError !== null) throw this.writeError;
    this.plant.setInput(this.id, level, this.nowMs());
    this.onApplied(this.level, level);
    this.level = level;
  }

  /** Makes `observe()` report `level` (a number to lie, `undefined` for unknown); `null` removes the override. */
  setObservedOverride(level: ActuatorLevel | null): void {
    this.observedOverride = level;
  }

  /** Makes `write()` reject with `error` without touching the plant; `null` restores normal writes. */
  failWrites(error: Error | null): void {
    this.writeError = error;
  }

  protected abstract validate(level: number, id: string): void;
  protected onApplied(_from: number, _to: number): void {}
}

/** A simulated on/off relay (heater, humidifier, plug): accepts only 0 and 1. */
export class SimRelay extends SimActuator {
  readonly kind = 'relay' as const;
  private switches = 0;

  constructor(opts: SimActuatorOptions<0 | 1>) {
    super(opts);
  }

  /** Number of actual 0↔1 changes (writes of the current level do not count). */
  get switchCount(): number {
    return this.switches;
  }

  protected validate(level: number, id: string): void {
    if (level !== 0 && level !== 1) throw new RangeError(`relay ${id}: level must be 0 or 1, got ${level}`);
  }

  protected override onApplied(from: number, to: number): void {
    if (from !== to) this.switches++;
  }
}

/** A simulated continuous actuator (PWM heater, dimmer, fan speed): accepts any level in 0..1. */
export class SimContinuous extends SimActuator {
  readonly kind = 'continuous' as const;

  protected validate(level: number, id: string): void {
    if (!(level >= 0 && level <= 1)) {
      throw new RangeError(`continuous actuator ${id}: level must be within 0..1, got ${level}`);
    }
  }
}
