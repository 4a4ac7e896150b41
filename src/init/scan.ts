/**
 * What `homeostat init` finds on the machine: the DS18B20 probes on the 1-Wire bus and the
 * temperature channels of the kernel's own sensor drivers (IIO, hwmon), each with one fresh
 * reading, and the GPIO chips. Read-only and pure over a sysfs root (`/sys` on the
 * Pi, a fixture tree in tests), through the same readers the drivers and `doctor` use, so
 * init lists exactly what the daemon will see.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Ds18b20Sensor, listDs18b20 } from '../drivers/ds18b20.js';
import { type GpioChip, listGpioChips, pickMainChip } from '../drivers/gpio/chip.js';
import { type KernelChannel, listKernelSensors } from '../drivers/kernel-sensors.js';
import { messageOf } from '../kinds/types.js';

/** One DS18B20 found, with its reading or why there is none. */
export interface FoundSensor {
  /** `28-…`, its directory under `<sysfsRoot>/bus/w1/devices`. */
  address: string;
  /** One fresh reading, °C; absent when the read was rejected (`error` says why). */
  tempC?: number;
  error?: string;
}

/** Everything init found under one sysfs root. */
export interface HardwareScan {
  sysfsRoot: string;
  /** `<sysfsRoot>/bus/w1/devices` exists: the kernel's 1-Wire driver is loaded. */
  oneWireBus: boolean;
  /** Sorted by address. */
  sensors: FoundSensor[];
  /**
   * The kernel's temperature channels a room loop can read: IIO and hwmon devices on a bus
   * (a BME280, an SHT3x, a thermocouple amplifier), in device order, each read once. Virtual
   * devices (the CPU's thermal zone) are left out: they measure the board, not the room.
   */
  kernelSensors: KernelChannel[];
  /** Sorted by base. */
  chips: GpioChip[];
  /** The chip whose line N is BCM GPIO N (the driver's rule), when there is one. */
  mainChip?: GpioChip;
  /** Why there is no main chip although chips were found. */
  mainChipProblem?: string;
}

/** Whether there is anything to build a hardware config on; otherwise init writes a simulation. */
export function foundHardware(scan: HardwareScan): boolean {
  return scan.sensors.length > 0 || scan.kernelSensors.length > 0 || scan.chips.length > 0;
}

/**
 * Scans `sysfsRoot`. Each probe is read once, one after the other: a conversion takes ~750 ms
 * and the kernel serialises the bus anyway. `nowMs` feeds the driver's rate limit (one read,
 * so it never trips). Never throws for missing directories; an unreadable chip list counts as
 * no chips.
 */
export async function scanHardware(
  sysfsRoot: string,
  deps: { nowMs?: () => number } = {},
): Promise<HardwareScan> {
  const nowMs = deps.nowMs ?? Date.now;
  const oneWireBus = await stat(join(sysfsRoot, 'bus/w1/devices')).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const addresses = await listDs18b20(sysfsRoot).catch(() => []);
  const sensors: FoundSensor[] = [];
  for (const address of addresses) sensors.push(await readOnce(sysfsRoot, address, nowMs));
  const kernelSensors = (await listKernelSensors(sysfsRoot)).filter(
    (channel) => channel.quantity === 'temperature' && !channel.virtual,
  );
  const chips = await listGpioChips(sysfsRoot).catch(() => []);
  const scan: HardwareScan = { sysfsRoot, oneWireBus, sensors, kernelSensors, chips };
  if (chips.length > 0) {
    try {
      scan.mainChip = pickMainChip(chips);
    } catch (error) {
      scan.mainChipProblem = messageOf(error);
    }
  }
  return scan;
}

/** One reading through the driver, with all its checks (CRC, power-on value, plausibility). */
async function readOnce(sysfsRoot: string, address: string, nowMs: () => number): Promise<FoundSensor> {
  try {
    const sensor = new Ds18b20Sensor({ id: address, address, sysfsRoot, nowMs });
    return { address, tempC: await sensor.read() };
  } catch (error) {
    return { address, error: messageOf(error) };
  }
}
