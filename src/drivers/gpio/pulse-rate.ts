import type { SensorDriver } from '../types.js';
import { type GpioChipOverride, resolveGpio } from './chip.js';
import type { GpioPort, GpioPortFactory } from './port.js';

/** Options of a {@link GpioPulseRate}. */
export interface GpioPulseRateOptions {
  id: string;
  /** BCM GPIO number. */
  bcm: number;
  /** Invert the pin (an open-collector output pulling low); flips which edge is `rising`. Default false. */
  activeLow?: boolean | undefined;
  /** Which transition is one pulse. Default `rising`. */
  edge?: 'rising' | 'falling' | undefined;
  /** Pulses are counted over the last `windowS` seconds. Longer: smoother, slower to follow. */
  windowS: number;
  /**
   * Quantity per pulse; `read()` returns pulses per minute × factor. A YF-S201 flow meter
   * gives ~450 pulses per litre, so factor 1/450 yields L/min. Default 1 (pulses/min).
   */
  factor?: number | undefined;
  /**
   * The clock pulses are timed on as they arrive, ms: the daemon's monotonic one, so the window
   * holds the last `windowS` of pulses whichever way the wall clock steps.
   */
  nowMs: () => number;
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  /** Opens the pin: `onoffPortFactory` on the Pi, a fake in tests. */
  portFactory: GpioPortFactory;
  /** Chip choice when the automatic one is wrong (see `resolveGpio`). */
  chip?: GpioChipOverride | undefined;
}

/**
 * A pulse counter read as a rate: flow meters, anemometers, energy meters' S0 outputs.
 * `rate = pulses in the last windowS / windowS in minutes × factor` (a sliding window, so the
 * value does not jump at bucket boundaries).
 *
 * No debounce: onoff's debounce reports one edge per quiet period, which would merge a fast
 * pulse train into one pulse. Meters with bouncy reed contacts need a hardware RC filter.
 * Until a full window has passed since `start()` there is no honest rate and `read()` throws.
 */
export class GpioPulseRate implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: GpioPulseRateOptions;
  private readonly windowMs: number;
  private readonly factor: number;
  private port: GpioPort | undefined;
  private startedAtMs = 0;
  /** Pulse times, oldest first; entries before `head` have left the window. */
  private pulsesMs: number[] = [];
  private head = 0;

  constructor(opts: GpioPulseRateOptions) {
    const factor = opts.factor ?? 1;
    if (!(opts.windowS > 0))
      throw new RangeError(`pulse counter ${opts.id}: windowS must be > 0, got ${opts.windowS}`);
    if (!(Number.isFinite(factor) && factor > 0)) {
      throw new RangeError(`pulse counter ${opts.id}: factor must be > 0, got ${factor}`);
    }
    this.id = opts.id;
    this.opts = opts;
    this.windowMs = opts.windowS * 1000;
    this.factor = factor;
  }

  /** Exports the pin as an input and starts counting. */
  async start(): Promise<void> {
    if (this.port) return;
    const { sysfsRoot, portFactory } = this.opts;
    const resolved = await resolveGpio(this.opts.bcm, { sysfsRoot, override: this.opts.chip });
    const port = await portFactory(resolved.sysfsNumber, 'in', {
      activeLow: this.opts.activeLow ?? false,
      edge: this.opts.edge ?? 'rising',
      reconfigureDirection: true,
    });
    this.pulsesMs = [];
    this.head = 0;
    this.startedAtMs = this.opts.nowMs();
    port.watch(() => {
      const nowMs = this.opts.nowMs();
      this.pulsesMs.push(nowMs);
      // Pruned here too, so memory stays bounded even if nobody reads.
      this.pulsesInWindow(nowMs);
    });
    this.port = port;
  }

  /** Stops counting and unexports the pin. */
  async stop(): Promise<void> {
    const port = this.port;
    this.port = undefined;
    port?.unexport();
  }

  /** Pulses per minute × factor over the last window; throws before one window has been counted. */
  async read(): Promise<number> {
    if (!this.port) throw new Error(`pulse counter ${this.id}: GPIO ${this.opts.bcm} not started`);
    const nowMs = this.opts.nowMs();
    if (nowMs - this.startedAtMs < this.windowMs) {
      throw new Error(`pulse counter ${this.id}: counting, first rate after ${this.opts.windowS} s`);
    }
    const pulses = this.pulsesInWindow(nowMs);
    return (pulses / (this.windowMs / 60_000)) * this.factor;
  }

  /** Drops pulses older than the window (at or before `nowMs - windowMs`) and counts the rest. */
  private pulsesInWindow(nowMs: number): number {
    const oldestMs = nowMs - this.windowMs;
    while (this.head < this.pulsesMs.length && this.pulsesMs[this.head]! <= oldestMs) this.head++;
    // Compact now and then rather than shift() per pulse (O(n) each at high pulse rates).
    if (this.head > 1024 && this.head * 2 > this.pulsesMs.length) {
      this.pulsesMs = this.pulsesMs.slice(this.head);
      this.head = 0;
    }
    return this.pulsesMs.length - this.head;
  }
}
