import type { SensorDriver } from '../types.js';
import { exportedDirection, type GpioChipOverride, resolveGpio } from './chip.js';
import type { GpioPort, GpioPortFactory } from './port.js';

/** Default debounce of {@link GpioInput}, ms: longer than a reed or float switch bounces (~1–5 ms). */
export const DEFAULT_INPUT_DEBOUNCE_MS = 20;

/** Options of a {@link GpioInput}. */
export interface GpioInputOptions {
  id: string;
  /** BCM GPIO number. */
  bcm: number;
  /** Report 1 when the pin is low (a switch to ground with a pull-up). Default false. */
  activeLow?: boolean | undefined;
  /** An edge is reported once the level has been stable this long, ms. Default 20; 0 = off. */
  debounceMs?: number | undefined;
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  /** Opens the pin: `onoffPortFactory` on the Pi, a fake in tests. */
  portFactory: GpioPortFactory;
  /** Chip choice when the automatic one is wrong (see `resolveGpio`). */
  chip?: GpioChipOverride | undefined;
}

/**
 * A digital input as a sensor reading 0 or 1: a window contact (open = 1), a float switch, a
 * door, a thermostat's demand line. `read()` reads the pin now (level-based: the value never
 * comes from a remembered edge); edges, debounced by the kernel poller, only call the
 * `onValue` listener so the daemon samples and runs the loop at once.
 *
 * The pin's pull-up/down is not set here (sysfs cannot): configure it with
 * `gpio=<bcm>=ip,pu` in config.txt, or use an external resistor.
 */
export class GpioInput implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: GpioInputOptions;
  private port: GpioPort | undefined;
  private listener: (() => void) | undefined;

  constructor(opts: GpioInputOptions) {
    const debounceMs = opts.debounceMs ?? DEFAULT_INPUT_DEBOUNCE_MS;
    if (!(debounceMs >= 0))
      throw new RangeError(`input ${opts.id}: debounceMs must be >= 0, got ${debounceMs}`);
    this.id = opts.id;
    this.opts = opts;
  }

  /**
   * Exports the pin as an input watching both edges. Refuses a pin that is already an
   * exported output: turning it into an input would cut whatever it drives (a relay).
   */
  async start(): Promise<void> {
    if (this.port) return;
    const { sysfsRoot, portFactory } = this.opts;
    const resolved = await resolveGpio(this.opts.bcm, { sysfsRoot, override: this.opts.chip });
    if ((await exportedDirection(sysfsRoot, resolved.sysfsNumber)) === 'out') {
      throw new Error(
        `input ${this.id}: GPIO ${this.opts.bcm} (sysfs ${resolved.sysfsNumber}) is exported as an output, ` +
          'in use by a relay or another program; refusing to make it an input',
      );
    }
    const port = await portFactory(resolved.sysfsNumber, 'in', {
      activeLow: this.opts.activeLow ?? false,
      edge: 'both',
      debounceTimeoutMs: this.opts.debounceMs ?? DEFAULT_INPUT_DEBOUNCE_MS,
      reconfigureDirection: true,
    });
    port.watch(() => this.listener?.());
    this.port = port;
  }

  /** Stops watching and unexports the pin (an input left exported would keep its poller). */
  async stop(): Promise<void> {
    const port = this.port;
    this.port = undefined;
    this.listener = undefined;
    port?.unexport();
  }

  /** The pin's logical level now: 1 active, 0 inactive. Rejects before `start()`. */
  async read(): Promise<number> {
    if (!this.port) throw new Error(`input ${this.id}: GPIO ${this.opts.bcm} not started`);
    return this.port.read();
  }

  /** `listener` is called after each debounced edge. Replaces the previous listener. */
  onValue(listener: () => void): void {
    this.listener = listener;
  }
}
