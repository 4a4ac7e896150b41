import type { ActuatorLevel } from '../../core/types.js';
import type { ActuatorDriver } from '../types.js';
import { exportedDirection, type GpioChipOverride, resolveGpio } from './chip.js';
import type { GpioPort, GpioPortFactory, PinLevel } from './port.js';

/** Options of a {@link GpioRelay}. */
export interface GpioRelayOptions {
  id: string;
  /** BCM GPIO number (the `GPIO17` of pinout diagrams, not the header pin). */
  bcm: number;
  /**
   * The relay is energised when the pin is low (most opto-isolated relay boards). Levels stay
   * logical: `write(1)` means on either way.
   */
  activeLow: boolean;
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  /** Opens the pin: `onoffPortFactory` on the Pi, a fake in tests. */
  portFactory: GpioPortFactory;
  /** Chip choice when the automatic one is wrong (see `resolveGpio`). */
  chip?: GpioChipOverride | undefined;
  /**
   * Unexport the pin on `stop()`. Default false: an unexported pin floats as an input and the
   * relay then follows the board's pull resistors, not the daemon; keeping the export lets the
   * next start adopt the pin at the level the daemon left it.
   */
  unexportOnStop?: boolean | undefined;
}

/** What `start()` found, for the daemon's log. */
export interface GpioRelayPin {
  sysfsNumber: number;
  chip: string;
  /** The pin was already an exported output and was taken over without being written. */
  adopted: boolean;
  /** Logical level read right after opening. */
  levelAtStart: PinLevel;
}

/**
 * A relay on a Raspberry Pi GPIO, through sysfs. `observe()` reads the pin back every cycle;
 * `write()` accepts 0 and 1.
 *
 * Start never switches the relay on, and never glitches one that is already running:
 * - pin already exported as an output (the daemon restarted, or was reloaded): adopted as
 *   it is — opened without writing its direction (`reconfigureDirection: false`: writing
 *   `out` drives it low for a moment, which energises an active-low relay) — and its level is
 *   read, so the first cycle observes before it acts;
 * - otherwise exported with the direction that means released: `high` for active-low boards,
 *   `low` for active-high ones. Raw levels: the kernel ignores `active_low` when a direction is
 *   written, so `out`/`low` would switch an active-low relay on at once.
 * `stop()` leaves the pin as the daemon last commanded (it drives safe states before stopping).
 */
export class GpioRelay implements ActuatorDriver {
  readonly id: string;
  readonly simulated = false;
  readonly kind = 'relay' as const;
  private readonly opts: GpioRelayOptions;
  private port: GpioPort | undefined;
  private pinInfo: GpioRelayPin | undefined;

  constructor(opts: GpioRelayOptions) {
    this.id = opts.id;
    this.opts = opts;
  }

  /** What `start()` found; `undefined` before it. */
  get pin(): GpioRelayPin | undefined {
    return this.pinInfo;
  }

  /** Resolves the BCM number, then adopts or exports the pin (see the class comment). */
  async start(): Promise<void> {
    if (this.port) return;
    const { sysfsRoot, activeLow, portFactory } = this.opts;
    const resolved = await resolveGpio(this.opts.bcm, { sysfsRoot, override: this.opts.chip });
    const adopted = (await exportedDirection(sysfsRoot, resolved.sysfsNumber)) === 'out';
    const port = adopted
      ? await portFactory(resolved.sysfsNumber, 'out', { activeLow, reconfigureDirection: false })
      : await portFactory(resolved.sysfsNumber, activeLow ? 'high' : 'low', {
          activeLow,
          reconfigureDirection: true,
        });
    const levelAtStart = await port.read();
    this.port = port;
    this.pinInfo = { sysfsNumber: resolved.sysfsNumber, chip: resolved.chip, adopted, levelAtStart };
  }

  /** Leaves the level alone; unexports only with `unexportOnStop`. */
  async stop(): Promise<void> {
    const port = this.port;
    this.port = undefined;
    if (port && this.opts.unexportOnStop) port.unexport();
  }

  /** The pin's logical level read back now; `undefined` when not started or unreadable. */
  async observe(): Promise<ActuatorLevel> {
    if (!this.port) return undefined;
    try {
      return await this.port.read();
    } catch {
      return undefined;
    }
  }

  /** Drives the relay: 1 on, 0 off. RangeError for any other level; rejects before `start()`. */
  async write(level: number): Promise<void> {
    if (level !== 0 && level !== 1) {
      throw new RangeError(`relay ${this.id}: level must be 0 or 1, got ${level}`);
    }
    if (!this.port) throw new Error(`relay ${this.id}: GPIO ${this.opts.bcm} not started`);
    await this.port.write(level);
  }
}
