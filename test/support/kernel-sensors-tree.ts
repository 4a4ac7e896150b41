/**
 * Fixture sysfs trees shaped like the kernel's for IIO and hwmon sensors, in a temp directory
 * (never the real /sys). The layout follows Documentation/ABI/testing/sysfs-bus-iio and
 * Documentation/hwmon/sysfs-interface, and the links are real symlinks as on a Pi:
 *
 *   devices/platform/soc/fe804000.i2c/i2c-1/1-0076/          the I2C client (name: bme280)
 *     iio:device0/{name,in_temp_input,...}                    its IIO device, numbered at probe
 *   bus/i2c/devices/1-0076   → ../../../devices/…/1-0076      the stable name
 *   bus/iio/devices/iio:device0 → ../../../devices/…/1-0076/iio:device0
 *   devices/…/1-0044/hwmon/hwmon2/{name,temp1_input,...}      an hwmon device (SHT3x)
 *   class/hwmon/hwmon2 → ../../devices/…/1-0044/hwmon/hwmon2
 */
import { lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** Where the Pi 4's I2C bus 1 controller sits in sysfs. */
const I2C1 = 'devices/platform/soc/fe804000.i2c/i2c-1';
const SPI0 = 'devices/platform/soc/fe204000.spi/spi_master/spi0';

/** A device on a bus: I2C `1-0076`, SPI `spi0.0`, or a platform device such as `dht11@4`. */
export type FixtureBus = { i2c: string } | { spi: string } | { platform: string };

function deviceDir(bus: FixtureBus): { real: string; busLink?: string } {
  if ('i2c' in bus) return { real: `${I2C1}/${bus.i2c}`, busLink: `bus/i2c/devices/${bus.i2c}` };
  if ('spi' in bus) return { real: `${SPI0}/${bus.spi}`, busLink: `bus/spi/devices/${bus.spi}` };
  return { real: `devices/platform/${bus.platform}`, busLink: `bus/platform/devices/${bus.platform}` };
}

function write(root: string, path: string, content: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A relative symlink at `link` (under root) to `target` (under root), as sysfs makes them. */
function link(root: string, link: string, target: string): void {
  const at = join(root, link);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(relative(dirname(at), join(root, target)), at);
}

/** Channel files: name → content (the kernel ends each with a newline). */
export type ChannelFiles = Record<string, string>;

/**
 * An IIO device `iio:device<index>` of the device on `bus`, with its `name` and channel files
 * (`in_temp_input: '21500'`); returns the real path of its directory.
 */
export function addIioDevice(
  root: string,
  opts: { bus: FixtureBus; index: number; name: string; channels: ChannelFiles },
): string {
  const { real, busLink } = deviceDir(opts.bus);
  const dir = `${real}/iio:device${opts.index}`;
  write(root, `${dir}/name`, `${opts.name}\n`);
  for (const [file, text] of Object.entries(opts.channels)) write(root, `${dir}/${file}`, `${text}\n`);
  if (busLink) ensureLink(root, busLink, real);
  link(root, `bus/iio/devices/iio:device${opts.index}`, dir);
  return join(root, dir);
}

/** An hwmon device `hwmon<index>` of the device on `bus` (or a virtual one, e.g. the CPU's). */
export function addHwmonDevice(
  root: string,
  opts: { bus: FixtureBus | { virtual: string }; index: number; name: string; channels: ChannelFiles },
): string {
  const real = 'virtual' in opts.bus ? `devices/virtual/${opts.bus.virtual}` : deviceDir(opts.bus).real;
  const dir = `${real}/hwmon/hwmon${opts.index}`;
  write(root, `${dir}/name`, `${opts.name}\n`);
  for (const [file, text] of Object.entries(opts.channels)) write(root, `${dir}/${file}`, `${text}\n`);
  if (!('virtual' in opts.bus)) {
    const { busLink } = deviceDir(opts.bus);
    if (busLink) ensureLink(root, busLink, real);
  }
  link(root, `class/hwmon/hwmon${opts.index}`, dir);
  return join(root, dir);
}

/** The bus link once per tree (a device with both IIO and hwmon has one). */
function ensureLink(root: string, busLink: string, real: string): void {
  if (lstatSync(join(root, busLink), { throwIfNoEntry: false }) === undefined) link(root, busLink, real);
}

/** A BME280 at 0x76 on bus 1 as the bmp280 IIO driver shows it: 21.5 °C, 45.123 %RH, 101.325 kPa. */
export function addBme280(root: string, index = 0, address = '1-0076'): string {
  return addIioDevice(root, {
    bus: { i2c: address },
    index,
    name: 'bme280',
    channels: {
      in_temp_input: '21500',
      in_humidityrelative_input: '45123',
      in_pressure_input: '101.325000000',
      in_temp_oversampling_ratio: '2',
    },
  });
}

/** An SHT3x at 0x44 on bus 1 through hwmon: 19.25 °C, 61.5 %RH. */
export function addSht3x(root: string, index = 2): string {
  return addHwmonDevice(root, {
    bus: { i2c: '1-0044' },
    index,
    name: 'sht3x',
    channels: { temp1_input: '19250', humidity1_input: '61500', update_interval: '0' },
  });
}

/** A MAX31855 on SPI0 CE0 (maxim_thermocouple driver): raw counts × scale 250 = milli °C. */
export function addMax31855(root: string, index = 1): string {
  return addIioDevice(root, {
    bus: { spi: 'spi0.0' },
    index,
    name: 'max31855k',
    channels: {
      in_temp_raw: '400',
      in_temp_scale: '250',
      in_temp_ambient_raw: '350',
      in_temp_ambient_scale: '62.5',
    },
  });
}

/** The CPU's thermal hwmon (every Pi has one): 48.3 °C. */
export function addCpuThermal(root: string, index = 0): string {
  return addHwmonDevice(root, {
    bus: { virtual: 'thermal/thermal_zone0' },
    index,
    name: 'cpu_thermal',
    channels: { temp1_input: '48300' },
  });
}
