import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readSysfsText } from './gpio/sysfs-read.js';
import type { SensorDriver } from './types.js';

/** A DS18B20's directory name: family code 28, then the 48-bit serial in hex. */
const ADDRESS = /^28-[0-9a-f]{12}$/i;

/** The value a DS18B20 holds after power-on, before its first conversion (°C × 1000). */
export const POWER_ON_MILLI_C = 85_000;

/**
 * An 85.000 °C read is believed only if the last accepted reading was this close to 85 °C:
 * a sensor that browns out (weak parasitic power, long cable) reports 85000 whatever the real
 * temperature, again and again, so repetition proves nothing; a real 85 °C is reached
 * gradually, so its neighbours are near 85.
 */
export const POWER_ON_NEIGHBOURHOOD_C = 3;

/**
 * Slack added to the rate limit, °C: a few steps of the 0.0625 °C resolution plus timing
 * jitter, so a steady signal with noise is never taken for a jump.
 */
export const RATE_SLACK_C = 0.5;

/** Reads a file as text; injectable so tests can script a sequence of reads. */
export type ReadTextFile = (path: string) => Promise<string>;

/** Options of a {@link Ds18b20Sensor}. */
export interface Ds18b20Options {
  id: string;
  /** `28-xxxxxxxxxxxx`; absent: the only DS18B20 on the bus (an error if there are several). */
  address?: string | undefined;
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  /**
   * The clock the rate limit measures on, ms: the daemon's monotonic one, so a wall-clock step
   * neither allows a jump (forward) nor refuses a normal change (back).
   */
  nowMs: () => number;
  /** Readings outside this range are rejected, °C. Default -55..125 (the datasheet's range). */
  plausible?: { min: number; max: number } | undefined;
  /**
   * Fastest believable change, °C/s. Default 1. A faster jump is rejected once and accepted if
   * the next read confirms it (a real step, e.g. the probe moved into hot water).
   */
  maxRatePerS?: number | undefined;
  /** Default: {@link readSysfsText} (at most one page read). */
  readFile?: ReadTextFile | undefined;
}

/** The addresses (`28-…`) under `<sysfsRoot>/bus/w1/devices`, sorted; `[]` without a 1-Wire bus. */
export async function listDs18b20(sysfsRoot: string): Promise<string[]> {
  try {
    const names = await readdir(devicesDir(sysfsRoot));
    return names.filter((n) => ADDRESS.test(n)).sort();
  } catch (err) {
    if (errno(err) === 'ENOENT') return [];
    throw err;
  }
}

/** A `w1_slave` file: the 9 scratchpad bytes, the kernel's CRC verdict and `t=` (°C × 1000). */
export interface W1SlaveRead {
  bytes: number[];
  crcOk: boolean;
  milliC: number;
}

/**
 * Parses `w1_slave`, e.g.
 * ```
 * 72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
 * 72 01 4b 46 7f ff 0e 10 57 t=23125
 * ```
 * Throws on anything else (a read cut short).
 */
export function parseW1Slave(text: string): W1SlaveRead {
  const [first = '', second = ''] = text.trim().split('\n');
  const crc = /^((?:[0-9a-f]{2} ){9}): crc=[0-9a-f]{2} (YES|NO)$/i.exec(first.trim());
  const t = /^(?:[0-9a-f]{2} ){9}t=(-?\d+)$/i.exec(second.trim());
  if (!crc || !t) throw new Error(`w1_slave not understood: ${JSON.stringify(text.slice(0, 120))}`);
  const bytes = crc[1]!
    .trim()
    .split(' ')
    .map((b) => Number.parseInt(b, 16));
  return { bytes, crcOk: crc[2]!.toUpperCase() === 'YES', milliC: Number.parseInt(t[1]!, 10) };
}

/**
 * A DS18B20 through the kernel's w1_therm driver. Every `read()` triggers a conversion
 * (~750 ms at 12 bits, holding a libuv thread): the sampler calls it off the control path.
 *
 * Reads `temperature` (°C × 1000, kernels ≥ 5.10) when present, else `w1_slave`, and rejects:
 * - a failed CRC (`crc=.. NO`; from `temperature`, an EIO error);
 * - scratchpads of all 00 (data line held low: the CRC of zeros is 00, so the kernel says YES)
 *   and all ff (nobody answering);
 * - 85.000 °C, the power-on value, unless the previous reading was near 85 °C;
 * - values outside `plausible`, and jumps faster than `maxRatePerS` unless repeated;
 * - a device that has left the bus ("not present": it usually comes back, and the next read
 *   succeeds without a restart).
 * Rejections throw; the sampler keeps its last reading, which ages into a stale sensor.
 */
export class Ds18b20Sensor implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: Ds18b20Options;
  private readonly plausible: { min: number; max: number };
  private readonly maxRatePerS: number;
  private readonly readText: ReadTextFile;
  /** Resolved once and kept, so a second sensor plugged in later cannot take over. */
  private address: string | undefined;
  /** Whether the kernel offers `temperature`; unknown until a read finds out. */
  private hasTemperatureFile: boolean | undefined;
  private lastAccepted: { tempC: number; atMs: number } | undefined;
  /** A jump rejected by the rate limit, accepted if the next read agrees with it. */
  private pendingJump: { tempC: number; atMs: number } | undefined;

  constructor(opts: Ds18b20Options) {
    if (opts.address !== undefined && !ADDRESS.test(opts.address)) {
      throw new RangeError(
        `sensor ${opts.id}: address must look like 28-0316a2795bff, got "${opts.address}"`,
      );
    }
    const plausible = opts.plausible ?? { min: -55, max: 125 };
    if (!(plausible.min < plausible.max)) {
      throw new RangeError(`sensor ${opts.id}: plausible.min must be < plausible.max`);
    }
    const maxRatePerS = opts.maxRatePerS ?? 1;
    if (!(maxRatePerS > 0))
      throw new RangeError(`sensor ${opts.id}: maxRatePerS must be > 0, got ${maxRatePerS}`);
    this.id = opts.id;
    this.opts = opts;
    this.plausible = plausible;
    this.maxRatePerS = maxRatePerS;
    this.address = opts.address?.toLowerCase();
    this.readText = opts.readFile ?? ((path) => readSysfsText(path));
  }

  /** A fresh temperature, °C; throws why there is none. */
  async read(): Promise<number> {
    const address = await this.resolveAddress();
    const milliC = await this.readMilliC(address);
    const tempC = milliC / 1000;
    const nowMs = this.opts.nowMs();
    this.checkPowerOn(milliC, address);
    const { min, max } = this.plausible;
    if (!(tempC >= min && tempC <= max)) {
      throw new Error(`${address}: ${tempC} °C is outside the plausible range ${min}..${max} °C`);
    }
    this.checkRate(tempC, nowMs, address);
    this.lastAccepted = { tempC, atMs: nowMs };
    this.pendingJump = undefined;
    return tempC;
  }

  private async resolveAddress(): Promise<string> {
    if (this.address !== undefined) return this.address;
    const found = await listDs18b20(this.opts.sysfsRoot);
    if (found.length === 0) {
      throw new Error(
        `no DS18B20 under ${devicesDir(this.opts.sysfsRoot)}: enable 1-Wire ` +
          '(dtoverlay=w1-gpio in /boot/firmware/config.txt) and check the wiring and the 4.7 kΩ pull-up',
      );
    }
    if (found.length > 1) {
      throw new Error(`several DS18B20 present (${found.join(', ')}): set the sensor's address`);
    }
    this.address = found[0]!;
    return this.address;
  }

  /** °C × 1000 from `temperature` or `w1_slave`, with the raw-read checks done. */
  private async readMilliC(address: string): Promise<number> {
    if (this.hasTemperatureFile !== false) {
      let text: string | undefined;
      try {
        text = await this.readText(join(devicesDir(this.opts.sysfsRoot), address, 'temperature'));
      } catch (err) {
        if (errno(err) === 'EIO') throw new Error(`${address}: read failed (CRC error or bus noise)`);
        if (errno(err) !== 'ENOENT') throw err;
      }
      if (text !== undefined) {
        this.hasTemperatureFile = true;
        const milliC = Number(text.trim());
        if (!Number.isInteger(milliC))
          throw new Error(`${address}: temperature not understood: "${text.trim()}"`);
        // `temperature` hides the scratchpad: exactly 0 may be a real 0 °C or a line stuck low.
        // w1_slave tells them apart (its config bytes are never 0 on a real read), at the cost of
        // a second conversion only in that rare case.
        if (milliC !== 0) return milliC;
      }
    }
    const raw = await this.readW1Slave(address);
    if (this.hasTemperatureFile === undefined) this.hasTemperatureFile = false;
    if (!raw.crcOk) throw new Error(`${address}: CRC error (crc=.. NO), bus noise or a bad contact`);
    if (raw.bytes.every((b) => b === 0)) {
      throw new Error(`${address}: all-zero read, the data line is held low (wiring or power)`);
    }
    if (raw.bytes.every((b) => b === 0xff))
      throw new Error(`${address}: all-ff read, the sensor did not answer`);
    return raw.milliC;
  }

  private async readW1Slave(address: string): Promise<W1SlaveRead> {
    try {
      return parseW1Slave(await this.readText(join(devicesDir(this.opts.sysfsRoot), address, 'w1_slave')));
    } catch (err) {
      if (errno(err) === 'ENOENT') {
        throw new Error(`device ${address} not present on the 1-Wire bus (unplugged or bus fault; retrying)`);
      }
      throw err;
    }
  }

  private checkPowerOn(milliC: number, address: string): void {
    if (milliC !== POWER_ON_MILLI_C) return;
    const last = this.lastAccepted;
    if (last && Math.abs(last.tempC - POWER_ON_MILLI_C / 1000) <= POWER_ON_NEIGHBOURHOOD_C) return;
    throw new Error(
      `${address}: 85 °C is the power-on value (sensor reset, often weak power), not a measurement`,
    );
  }

  /**
   * `|Δ| ≤ maxRatePerS × Δt + RATE_SLACK_C` from the last accepted reading, or from a rejected
   * jump that this read confirms.
   */
  private checkRate(tempC: number, nowMs: number, address: string): void {
    const within = (ref: { tempC: number; atMs: number }) =>
      Math.abs(tempC - ref.tempC) <= (this.maxRatePerS * Math.max(0, nowMs - ref.atMs)) / 1000 + RATE_SLACK_C;
    const last = this.lastAccepted;
    if (!last || within(last)) return;
    if (this.pendingJump && within(this.pendingJump)) return;
    this.pendingJump = { tempC, atMs: nowMs };
    const dtS = (nowMs - last.atMs) / 1000;
    throw new Error(
      `${address}: jump from ${last.tempC} to ${tempC} °C in ${dtS} s is faster than ${this.maxRatePerS} °C/s; ` +
        'accepted if the next read confirms it',
    );
  }
}

function devicesDir(sysfsRoot: string): string {
  return join(sysfsRoot, 'bus/w1/devices');
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
