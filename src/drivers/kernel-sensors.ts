/**
 * The temperature, humidity and pressure channels the kernel's own drivers offer under a sysfs
 * root: IIO devices (`<root>/bus/iio/devices/iio:deviceN`, Documentation/ABI/testing/sysfs-bus-iio)
 * and hwmon devices (`<root>/class/hwmon/hwmonN`, Documentation/hwmon/sysfs-interface), each with
 * one fresh reading through the file_value driver and the `path` and `scale` a config uses.
 *
 * The `iio:deviceN`/`hwmonN` numbers follow probe order and change between boots, so a channel
 * is named by its device's stable place instead, with `iio:device*` or `hwmon*` for the numbered
 * directory: under `/sys/bus/i2c/devices/1-0076/` for I2C, `/sys/bus/spi/devices/spi0.0/` for
 * SPI, otherwise under the device's real path. `doctor` and `init` list them; nothing here writes.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { FileValueSensor } from './file-value.js';
import { readSysfsText } from './gpio/sysfs-read.js';

export type KernelQuantity = 'temperature' | 'humidity' | 'pressure';

/** One channel found, read once. */
export interface KernelChannel {
  /** The driver's `name` file (bme280, sht3x, dht11, max31855k, cpu_thermal…). */
  driver: string;
  /** Where the device sits, stable across boots: `i2c 1-0076`, `spi spi0.0`, or a sysfs path. */
  place: string;
  interface: 'iio' | 'hwmon';
  /** The channel file's name: in_temp_input, in_temp_raw, temp1_input, humidity1_input… */
  channel: string;
  quantity: KernelQuantity;
  /** The file_value `path`: under /sys, with the numbered directory as a pattern. */
  configPath: string;
  /** The file_value `scale` that gives `unit`. */
  scale: number;
  /** °C, %RH or hPa. */
  unit: string;
  /** Under virtual devices (the CPU's thermal zone): no room or tank sensor. */
  virtual: boolean;
  /** One reading in `unit`, or why there is none. */
  reading: { value: number } | { error: string };
}

/** Channel file → quantity, and the scale from the kernel's unit to ours. */
interface ChannelRule {
  file: RegExp;
  quantity: KernelQuantity;
  scale: number;
  unit: string;
}

/** milli °C, milli %RH, kPa (IIO pressure) → °C, %RH, hPa. */
const IIO_RULES: ChannelRule[] = [
  { file: /^in_temp(_ambient|_object)?_(input|raw)$/, quantity: 'temperature', scale: 0.001, unit: '°C' },
  { file: /^in_humidityrelative_(input|raw)$/, quantity: 'humidity', scale: 0.001, unit: '%RH' },
  { file: /^in_pressure_(input|raw)$/, quantity: 'pressure', scale: 10, unit: 'hPa' },
];

/** hwmon: temperatures and humidity in milli units. */
const HWMON_RULES: ChannelRule[] = [
  { file: /^temp\d+_input$/, quantity: 'temperature', scale: 0.001, unit: '°C' },
  { file: /^humidity\d+_input$/, quantity: 'humidity', scale: 0.001, unit: '%RH' },
];

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort(naturalOrder);
  } catch {
    return [];
  }
}

/** `hwmon2` before `hwmon10`. */
function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/** The channel files a device offers; an `_input` hides the `_raw` of the same channel. */
function channelsOf(files: string[], rules: ChannelRule[]): { file: string; rule: ChannelRule }[] {
  const found: { file: string; rule: ChannelRule }[] = [];
  for (const file of files) {
    const rule = rules.find((r) => r.file.test(file));
    if (!rule) continue;
    if (file.endsWith('_raw') && files.includes(file.replace(/_raw$/, '_input'))) continue;
    found.push({ file, rule });
  }
  return found;
}

/**
 * The stable `/sys/…` directory of a numbered device directory (its real path `real` under
 * `root`), with the numbered part as a pattern, and how to say where it is.
 */
export function stableDir(root: string, real: string): { dir: string; place: string } {
  const numbered = basename(real).replace(/^(iio:device|hwmon)\d+$/, '$1*');
  // hwmon devices sit in `<device>/hwmon/hwmonN`, IIO ones in `<device>/iio:deviceN`.
  const parent = basename(dirname(real)) === 'hwmon' ? dirname(dirname(real)) : dirname(real);
  const tail = basename(dirname(real)) === 'hwmon' ? `hwmon/${numbered}` : numbered;
  const device = basename(parent);
  if (/^\d+-[0-9a-f]{4}$/.test(device)) {
    return { dir: `/sys/bus/i2c/devices/${device}/${tail}`, place: `i2c ${device}` };
  }
  if (/^spi\d+\.\d+$/.test(device)) {
    return { dir: `/sys/bus/spi/devices/${device}/${tail}`, place: `spi ${device}` };
  }
  const fromRoot = relative(root, parent);
  // A class-level virtual device (/sys/devices/virtual/hwmon/hwmonN) has no parent to name it
  // by: a pattern would match every such device, so its number stays (it may change at boot).
  if (fromRoot === 'devices/virtual') {
    const numberedDir = `/sys/${relative(root, real)}`;
    return { dir: numberedDir, place: `${numberedDir} (numbered: may change between boots)` };
  }
  return { dir: `/sys/${fromRoot}/${tail}`, place: `/sys/${fromRoot}` };
}

/** The devices of one class directory, each by its real directory. */
function devicesUnder(classDir: string, name: RegExp): string[] {
  const reals: string[] = [];
  for (const entry of listDir(classDir)) {
    if (!name.test(entry)) continue;
    try {
      reals.push(realpathSync(join(classDir, entry)));
    } catch {
      // A link to a device that is going away: not there.
    }
  }
  return reals;
}

/** Reads `path` as the daemon will (pattern, IIO scale), under `sysfsRoot`. */
async function readOnce(
  configPath: string,
  scale: number,
  sysfsRoot: string,
): Promise<KernelChannel['reading']> {
  try {
    const value = await new FileValueSensor({ id: 'scan', path: configPath, scale, sysfsRoot }).read();
    return Number.isFinite(value) ? { value } : { error: `the device says the value is unknown (${value})` };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

async function nameOf(dir: string): Promise<string> {
  return (await readSysfsText(join(dir, 'name')).catch(() => '?')).trim() || '?';
}

/**
 * Every temperature, humidity and pressure channel under `sysfsRoot`, IIO first then hwmon, in
 * device order, each read once. Missing class directories are no devices; never throws.
 */
export async function listKernelSensors(sysfsRoot: string): Promise<KernelChannel[]> {
  const classes = [
    { iface: 'iio' as const, dir: 'bus/iio/devices', name: /^iio:device\d+$/, rules: IIO_RULES },
    { iface: 'hwmon' as const, dir: 'class/hwmon', name: /^hwmon\d+$/, rules: HWMON_RULES },
  ];
  const found: KernelChannel[] = [];
  for (const { iface, dir, name, rules } of classes) {
    for (const real of devicesUnder(join(sysfsRoot, dir), name)) {
      const stable = stableDir(sysfsRoot, real);
      const driver = await nameOf(real);
      for (const { file, rule } of channelsOf(listDir(real), rules)) {
        const configPath = `${stable.dir}/${file}`;
        found.push({
          driver,
          place: stable.place,
          interface: iface,
          channel: file,
          quantity: rule.quantity,
          configPath,
          scale: rule.scale,
          unit: rule.unit,
          virtual: stable.dir.startsWith('/sys/devices/virtual/'),
          reading: await readOnce(configPath, rule.scale, sysfsRoot),
        });
      }
    }
  }
  return found;
}

/** `bme280_humidity`, a sensor id a config can use (ids are lowercase, digits and _). */
export function suggestedSensorId(channel: KernelChannel): string {
  const short = { temperature: 'temp', humidity: 'humidity', pressure: 'pressure' }[channel.quantity];
  const ambient = /_ambient_/.test(channel.channel) ? '_ambient' : '';
  const index = /^(temp|humidity)(\d+)_/.exec(channel.channel)?.[2];
  const nth = index !== undefined && index !== '1' ? index : '';
  const base =
    channel.driver
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'kernel';
  return `${base}_${short}${ambient}${nth}`;
}

/** {@link suggestedSensorId} of each channel, `_2`, `_3`… after repeats (two BME280s). */
export function uniqueSensorIds(channels: KernelChannel[]): string[] {
  const seen = new Map<string, number>();
  return channels.map((channel) => {
    const id = suggestedSensorId(channel);
    const count = (seen.get(id) ?? 0) + 1;
    seen.set(id, count);
    return count === 1 ? id : `${id}_${count}`;
  });
}

/** `21.5 °C`, or why there is no reading. */
export function describeReading(channel: KernelChannel): string {
  return 'value' in channel.reading
    ? `${channel.reading.value} ${channel.unit}`
    : `no reading: ${channel.reading.error}`;
}

/** The config lines of a file_value sensor on `channel`, indented under `sensors:`. */
export function sensorConfigLines(channel: KernelChannel, id = suggestedSensorId(channel)): string[] {
  return [
    `  ${id}:`,
    '    kind: file_value',
    `    path: ${channel.configPath}`,
    `    scale: ${channel.scale} # ${channel.channel} → ${channel.unit}`,
  ];
}
