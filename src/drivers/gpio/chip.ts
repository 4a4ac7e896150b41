import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readSysfsText } from './sysfs-read.js';

/**
 * Labels of the Raspberry Pi's main GPIO controller, the one whose line N is BCM GPIO N:
 * `pinctrl-bcm2835` (Pi 1–3, Zero: BCM2835/6/7, 54 lines), `pinctrl-bcm2711` (Pi 4, 400,
 * CM4: 58 lines), `pinctrl-rp1` (Pi 5: the RP1 south bridge, 54 lines).
 */
export const PI_MAIN_CHIP_LABELS: readonly string[] = ['pinctrl-bcm2835', 'pinctrl-bcm2711', 'pinctrl-rp1'];

/**
 * Fewest lines of a Pi's main controller (BCM2835/6/7 and RP1 have 54, BCM2711 has 58).
 * The other chips a Pi exposes have fewer: the firmware expander `raspberrypi-exp-gpio` (8),
 * the Pi 5's own `gpio-brcmstb@…` banks (32, 17, 6, 4).
 */
export const MIN_MAIN_CHIP_LINES = 54;

/** One `<root>/class/gpio/gpiochip*` directory. */
export interface GpioChip {
  /** Directory name, `gpiochip571`. */
  name: string;
  label: string;
  /** sysfs number of the chip's line 0. */
  base: number;
  /** Number of lines. */
  ngpio: number;
}

/** Explicit choice of the chip, for boards the automatic rule gets wrong. */
export interface GpioChipOverride {
  /** sysfs number of BCM GPIO 0; wins over everything, sysfs is not read. */
  base?: number | undefined;
  /** Use the chip with exactly this label instead of the known Pi labels. */
  chipLabel?: string | undefined;
}

/** Options of {@link resolveGpio}. */
export interface ResolveGpioOptions {
  /** Where sysfs is mounted (the config's gpio.sysfsRoot); tests pass a fixture directory. */
  sysfsRoot: string;
  override?: GpioChipOverride | undefined;
}

/** A BCM GPIO number translated to the number sysfs (and onoff) use. */
export interface ResolvedGpio {
  /** `base + bcm`: what to write to `/sys/class/gpio/export`. */
  sysfsNumber: number;
  /** The chip's label (`override` when the base was given explicitly). */
  chip: string;
  base: number;
}

/**
 * Translates BCM GPIO `bcm` to its sysfs number. Since kernel 6.6 the sysfs numbers of the
 * Pi's GPIOs no longer start at 0 (512 on a Pi 4 with Bookworm, 571 on a Pi 5, and the base
 * has moved between kernel releases), so a fixed offset is wrong somewhere: read the chips.
 *
 * Which chip, in order:
 * 1. `override.base` given: that base, nothing is read;
 * 2. `override.chipLabel` given: the chip with that label, or an error naming those present;
 * 3. a chip labelled as a Pi's main controller ({@link PI_MAIN_CHIP_LABELS});
 * 4. otherwise (a future Pi, a renamed driver) the chip with the lowest base among those with
 *    at least {@link MIN_MAIN_CHIP_LINES} lines: only a main controller has that many lines,
 *    so expanders and the Pi 5's small brcmstb banks (whose base is lower than RP1's) are skipped.
 * Errors say what to do.
 */
export async function resolveGpio(bcm: number, opts: ResolveGpioOptions): Promise<ResolvedGpio> {
  if (!Number.isInteger(bcm) || bcm < 0) {
    throw new RangeError(`GPIO ${bcm}: a BCM GPIO number is an integer >= 0`);
  }
  const override = opts.override;
  if (override?.base !== undefined) {
    if (!Number.isInteger(override.base) || override.base < 0) {
      throw new RangeError(`GPIO base override must be an integer >= 0, got ${override.base}`);
    }
    return { sysfsNumber: override.base + bcm, chip: 'override', base: override.base };
  }
  const root = opts.sysfsRoot;
  const chips = await listGpioChips(root);
  if (chips.length === 0) {
    throw new Error(
      `no GPIO chips under ${join(root, 'class/gpio')}: is this a Raspberry Pi with sysfs GPIO?`,
    );
  }
  const chip = pickMainChip(chips, override?.chipLabel);
  if (bcm >= chip.ngpio) {
    throw new RangeError(`GPIO ${bcm}: out of range, ${chip.label} has GPIO 0..${chip.ngpio - 1}`);
  }
  return { sysfsNumber: chip.base + bcm, chip: chip.label, base: chip.base };
}

/** The chips under `<root>/class/gpio`, by increasing base; `[]` when the directory is absent. */
export async function listGpioChips(sysfsRoot: string): Promise<GpioChip[]> {
  const dir = join(sysfsRoot, 'class/gpio');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const chips: GpioChip[] = [];
  for (const name of names.filter((n) => /^gpiochip\d+$/.test(n)).sort()) {
    const read = (file: string) => readSysfsText(join(dir, name, file)).then((s) => s.trim());
    const [label, base, ngpio] = await Promise.all([read('label'), read('base'), read('ngpio')]);
    const chip = { name, label, base: Number.parseInt(base, 10), ngpio: Number.parseInt(ngpio, 10) };
    if (Number.isInteger(chip.base) && Number.isInteger(chip.ngpio)) chips.push(chip);
  }
  return chips.sort((a, b) => a.base - b.base);
}

/** Steps 2–4 of {@link resolveGpio}'s rule; `chips` sorted by base. */
export function pickMainChip(chips: readonly GpioChip[], chipLabel?: string): GpioChip {
  const present = chips.map((c) => `${c.name} "${c.label}" (${c.ngpio} lines)`).join(', ');
  if (chipLabel !== undefined) {
    const chip = chips.find((c) => c.label === chipLabel);
    if (!chip) throw new Error(`no GPIO chip labelled "${chipLabel}"; present: ${present}`);
    return chip;
  }
  const known = chips.find((c) => PI_MAIN_CHIP_LABELS.includes(c.label));
  if (known) return known;
  const big = chips.find((c) => c.ngpio >= MIN_MAIN_CHIP_LINES);
  if (big) return big;
  throw new Error(
    `no Raspberry Pi GPIO controller found (present: ${present}); set the chip label or base explicitly`,
  );
}

/**
 * Direction of sysfs GPIO `sysfsNumber` if it is exported (`<root>/class/gpio/gpio<N>/direction`),
 * `undefined` if it is not. Exports outlive the process, so after a restart our own relay
 * pins are still exported outputs holding the level we left them at.
 */
export async function exportedDirection(
  sysfsRoot: string,
  sysfsNumber: number,
): Promise<'in' | 'out' | undefined> {
  try {
    const text = await readSysfsText(join(sysfsRoot, 'class/gpio', `gpio${sysfsNumber}`, 'direction'));
    return text.trim() === 'out' ? 'out' : 'in';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
