/** A logical pin level: 1 = active (after `activeLow` inversion), 0 = inactive. */
export type PinLevel = 0 | 1;

/**
 * How a pin is opened: `in`, or an output starting at a raw level — `high`/`low` (the kernel
 * applies them *without* `active_low`), `out` = `low`.
 */
export type PinDirection = 'in' | 'out' | 'high' | 'low';

/** Which input transitions call `watch` listeners. */
export type PinEdge = 'none' | 'rising' | 'falling' | 'both';

/** Options of a {@link GpioPortFactory}, onoff's `Gpio` options with units in their names. */
export interface GpioPortOptions {
  /** Invert reads and writes (and rising/falling edges). */
  activeLow: boolean;
  /** Inputs: edges that call `watch` listeners. Default none. */
  edge?: PinEdge | undefined;
  /** Inputs: report an edge only once the level has been stable this long, ms. Default 0 = off. */
  debounceTimeoutMs?: number | undefined;
  /**
   * `false`: an already exported pin whose direction matches is not written again — writing
   * `out` to a live output drives it low for a moment (a relay glitch on restart).
   */
  reconfigureDirection: boolean;
}

/** One exported sysfs GPIO, as the drivers see it. Levels are logical (after `activeLow`). */
export interface GpioPort {
  read(): Promise<PinLevel>;
  write(value: PinLevel): Promise<void>;
  /** Calls `listener` with the level after each configured edge (debounced if asked). */
  watch(listener: (value: PinLevel) => void): void;
  /** Stops watching and unexports the pin (it becomes a floating input). */
  unexport(): void;
}

/**
 * Opens (exports and configures) sysfs GPIO `sysfsNumber`. Asynchronous so the real one can
 * load onoff (a native addon) only when a GPIO driver starts: tests and simulated setups never
 * load it.
 */
export type GpioPortFactory = (
  sysfsNumber: number,
  direction: PinDirection,
  opts: GpioPortOptions,
) => Promise<GpioPort>;

/** The fix for a pin the daemon's user may not export. */
export const GPIO_PERMISSION_FIX =
  'add the homeostat user to the gpio group (sudo usermod -aG gpio homeostat) and restart';

/** The real factory: onoff's `Gpio` on `/sys/class/gpio` (onoff's root is fixed). */
export const onoffPortFactory: GpioPortFactory = async (sysfsNumber, direction, opts) => {
  const { Gpio } = await import('onoff');
  let gpio: InstanceType<typeof Gpio>;
  try {
    gpio = new Gpio(sysfsNumber, direction, opts.edge ?? 'none', {
      activeLow: opts.activeLow,
      reconfigureDirection: opts.reconfigureDirection,
      debounceTimeout: opts.debounceTimeoutMs ?? 0,
    });
  } catch (err) {
    throw gpioOpenError(err, sysfsNumber);
  }
  return {
    read: () => gpio.read(),
    write: (value) => gpio.write(value),
    // An error from the poller is dropped: the level is read again on the next sample anyway.
    watch: (listener) => gpio.watch((err, value) => (err ? undefined : listener(value))),
    unexport: () => gpio.unexport(),
  };
};

/** Rewrites an error from exporting/configuring a pin into one that says what to do. */
export function gpioOpenError(err: unknown, sysfsNumber: number): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const what = `GPIO sysfs ${sysfsNumber}`;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return new Error(`${what}: permission denied on /sys/class/gpio: ${GPIO_PERMISSION_FIX}`, {
        cause: err,
      });
    case 'EBUSY':
      return new Error(
        `${what}: busy, claimed by a kernel driver (a dtoverlay such as w1-gpio) or another program`,
        { cause: err },
      );
    case 'EINVAL':
      return new Error(`${what}: the kernel rejects this number; check the BCM number and the chip base`, {
        cause: err,
      });
    case 'ENOENT':
      return new Error(`${what}: /sys/class/gpio/export missing: this kernel has no sysfs GPIO`, {
        cause: err,
      });
    default:
      return err instanceof Error ? err : new Error(`${what}: ${String(err)}`);
  }
}
