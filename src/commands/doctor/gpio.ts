/** Doctor check 2: GPIO chips and pins under sysfs. */
import { join } from 'node:path';
import type { Config } from '../../config/schema.js';
import { exportedDirection, listGpioChips, resolveGpio } from '../../drivers/gpio/chip.js';
import { gpioPinOf } from '../../kinds/registry.js';
import type { CheckResult } from '../../kinds/types.js';
import { type CanWrite, canWriteFs, failedCheck } from './shared.js';

const GPIO_GROUP_FIX =
  'add the service user to the gpio group, which owns /sys/class/gpio on Raspberry Pi OS: ' +
  'sudo usermod -aG gpio homeostat, then restart homeostat';

/** Every section with a GPIO pin (its kind says which field), with its path in the file. */
function pinsOf(config: Config): { path: string; bcm: number }[] {
  const pins: { path: string; bcm: number }[] = [];
  for (const section of ['sensors', 'actuators'] as const) {
    for (const [id, item] of Object.entries(config[section])) {
      const bcm = gpioPinOf(item);
      if (bcm !== undefined) pins.push({ path: `${section}.${id}`, bcm });
    }
  }
  return pins;
}

/**
 * The GPIO chips under `<sysfsRoot>/class/gpio`, then per configured pin: the chip and sysfs
 * number it resolves to, and whether it can be exported (`export` writable by this user) or
 * already is. One skipped result when no sensor or actuator has a `bcm` pin.
 */
export async function checkGpio(config: Config, deps: { canWrite?: CanWrite } = {}): Promise<CheckResult[]> {
  const pins = pinsOf(config);
  if (pins.length === 0) return [{ name: 'GPIO', status: 'skip', detail: 'no GPIO pins in this config' }];
  const chips = await checkChips(config.gpio);
  if (chips.status === 'fail') return [chips];
  const results: CheckResult[] = [chips];
  const canWrite = deps.canWrite ?? canWriteFs;
  const exportWritable = await canWrite(join(config.gpio.sysfsRoot, 'class/gpio', 'export'));
  for (const pin of pins) results.push(await checkPin(pin, config.gpio, exportWritable));
  return results;
}

/** The chips the kernel lists; a failure only when there are none and no `gpio.base` to fall back on. */
async function checkChips(block: Config['gpio']): Promise<CheckResult> {
  const gpioDir = join(block.sysfsRoot, 'class/gpio');
  const chips = await listGpioChips(block.sysfsRoot).catch(() => []);
  if (chips.length === 0 && block.base === undefined) {
    return {
      name: 'GPIO chips',
      status: 'fail',
      detail: `no GPIO chips under ${gpioDir}`,
      fix:
        'homeostat drives pins through sysfs GPIO (/sys/class/gpio), which this kernel does not offer: ' +
        'run it on a Raspberry Pi with a Raspberry Pi OS kernel (built with CONFIG_GPIO_SYSFS), or set ' +
        'gpio.sysfsRoot if sysfs is mounted elsewhere',
    };
  }
  return {
    name: 'GPIO chips',
    status: 'ok',
    detail:
      chips.length === 0
        ? `none listed; gpio.base ${block.base} is used as configured`
        : chips.map((c) => `${c.name} "${c.label}" base ${c.base} (${c.ngpio} lines)`).join(', '),
  };
}

/** One configured pin: where it resolves to, and whether it is exported or can be. */
async function checkPin(
  { path, bcm }: { path: string; bcm: number },
  block: Config['gpio'],
  exportWritable: boolean,
): Promise<CheckResult> {
  const root = block.sysfsRoot;
  const name = `GPIO${bcm} (${path})`;
  let resolved: Awaited<ReturnType<typeof resolveGpio>>;
  try {
    resolved = await resolveGpio(bcm, {
      sysfsRoot: root,
      override: { base: block.base, chipLabel: block.chipLabel },
    });
  } catch (error) {
    return failedCheck(
      name,
      error,
      "set gpio.chipLabel to the label of the Pi's main GPIO chip (listed above), or gpio.base to its base",
    );
  }
  const where = `sysfs ${resolved.sysfsNumber} on ${resolved.chip} (base ${resolved.base})`;
  const direction = await exportedDirection(root, resolved.sysfsNumber).catch(() => undefined);
  if (direction !== undefined)
    return { name, status: 'ok', detail: `${where}, already exported (${direction})` };
  if (exportWritable) return { name, status: 'ok', detail: `${where}, exportable` };
  return {
    name,
    status: 'fail',
    detail: `${where}: ${join(root, 'class/gpio', 'export')} is not writable by this user`,
    fix: GPIO_GROUP_FIX,
  };
}
