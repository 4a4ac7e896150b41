import type { ReadTextFile } from './ds18b20.js';
import { readSysfsText } from './gpio/sysfs-read.js';
import { iioProcessed, iioSiblings, isIioRawFile } from './iio.js';
import { type GlobFs, hasWildcard, nodeGlobFs, uniqueMatch } from './sysfs-glob.js';
import { KERNEL_SYSFS, underSysfsRoot } from './sysfs-path.js';
import type { SensorDriver } from './types.js';

/** Options of a {@link FileValueSensor}. */
export interface FileValueOptions {
  id: string;
  /**
   * Absolute path of a file holding one number (a sysfs attribute, a 1-Wire-like device), or a
   * pattern (`*`, `?` within one segment) that must match exactly one file, looked up again at
   * every read. A path under `/sys` is read under `sysfsRoot`. An IIO `in_…_raw` file is read
   * with its `_scale` and `_offset` siblings (see iio.ts).
   */
  path: string;
  /** Where sysfs is mounted (gpio.sysfsRoot). Default `/sys`. */
  sysfsRoot?: string | undefined;
  /** Multiplier applied to the number read, e.g. 0.001 for millidegrees. Default 1. */
  scale?: number | undefined;
  /** Added after scaling, in the reading's unit. Default 0. */
  offset?: number | undefined;
  /** Readings (after scale and offset) outside this range are rejected. Default: no check. */
  plausible?: { min: number; max: number } | undefined;
  /** Default: {@link readSysfsText} (at most one page read, asynchronously). */
  readFile?: ReadTextFile | undefined;
  /** How a pattern is expanded. Default: the real file system. */
  globFs?: GlobFs | undefined;
}

/** One decimal number, optionally signed, with an optional exponent; nothing else. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/** A device saying its value is unknown now (a kernel driver's `nan`, a script's `inf`). */
const NOT_A_NUMBER = /^([+-]?)(nan|inf|infinity)$/i;

/**
 * The number a file holds, or why there is none. Stricter than `Number()`, which reads an empty
 * file as 0 and accepts `0x1f`: a file that does not hold exactly one decimal number must not
 * become a believable reading. `nan`/`inf` (any case, signed) are the device saying the value is
 * unknown: NaN/±Infinity, which the loop judges NotFinite; an overflowing `1e999` is garbage.
 */
export function parseFileNumber(text: string): { ok: true; value: number } | { ok: false; problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, problem: 'the file is empty' };
  const unknown = NOT_A_NUMBER.exec(trimmed);
  if (unknown) {
    const [, sign, word] = unknown;
    const infinity = sign === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    return { ok: true, value: word?.toLowerCase() === 'nan' ? Number.NaN : infinity };
  }
  const value = Number(trimmed);
  if (!DECIMAL.test(trimmed) || !Number.isFinite(value)) {
    return { ok: false, problem: `not a number: ${JSON.stringify(trimmed.slice(0, 40))}` };
  }
  return { ok: true, value };
}

/**
 * A number read from a file at every sample, e.g. `/sys/class/thermal/thermal_zone0/temp`
 * (millidegrees: scale 0.001), a pattern naming one file whose directory is numbered at boot
 * (`/sys/bus/i2c/devices/1-0076/iio:device*` then the channel file), or an IIO `_raw` file
 * read with its kernel scale and offset. The read is asynchronous and bounded to one page, so a slow or
 * odd file delays only this sensor (the sampler skips a sample while a read is still running),
 * never the control loop. `nan`/`inf` read as NaN/±Infinity (the loop goes safe in this cycle);
 * anything else but one decimal number throws: the sampler keeps the last reading, which ages
 * into a stale sensor and sends the loop safe.
 */
export class FileValueSensor implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly path: string;
  private readonly scale: number;
  private readonly offset: number;
  private readonly plausible: { min: number; max: number } | undefined;
  private readonly readText: ReadTextFile;
  private readonly globFs: GlobFs;

  constructor(opts: FileValueOptions) {
    const scale = opts.scale ?? 1;
    const offset = opts.offset ?? 0;
    if (!Number.isFinite(scale) || scale === 0) {
      throw new RangeError(`sensor ${opts.id}: scale must be a finite number other than 0, got ${scale}`);
    }
    if (!Number.isFinite(offset)) throw new RangeError(`sensor ${opts.id}: offset must be finite`);
    if (opts.plausible && !(opts.plausible.min < opts.plausible.max)) {
      throw new RangeError(`sensor ${opts.id}: plausible.min must be < plausible.max`);
    }
    this.id = opts.id;
    this.path = underSysfsRoot(opts.path, opts.sysfsRoot ?? KERNEL_SYSFS);
    this.scale = scale;
    this.offset = offset;
    this.plausible = opts.plausible;
    this.readText = opts.readFile ?? ((path) => readSysfsText(path));
    this.globFs = opts.globFs ?? nodeGlobFs;
  }

  /**
   * The file read now: the path itself, or the only file its pattern matches at this moment
   * (devices appear late at boot and may be probed again under another number, so the pattern
   * is expanded at every read). None or several is a failed read naming the matches.
   */
  resolvePath(): string {
    if (!hasWildcard(this.path)) return this.path;
    const match = uniqueMatch(this.path, this.globFs);
    if (!match.ok) throw new Error(match.problem);
    return match.path;
  }

  /**
   * The file's number × scale + offset; throws why there is none. A file saying `nan` or `inf`
   * reads as that value, as an MQTT sensor's does: the loops go safe in this cycle rather than
   * when the last good reading goes stale.
   */
  async read(): Promise<number> {
    const path = this.resolvePath();
    const number = isIioRawFile(path) ? await this.readIioRaw(path) : await this.readNumber(path);
    if (!Number.isFinite(number)) return number;
    // Rounded to 12 significant digits: 45123 × 0.001 reads 45.123, not 45.123000000000005.
    const value = Number((number * this.scale + this.offset).toPrecision(12));
    if (this.plausible && !(value >= this.plausible.min && value <= this.plausible.max)) {
      const { min, max } = this.plausible;
      throw new Error(`${path}: ${value} is outside the plausible range ${min}..${max}`);
    }
    return value;
  }

  /** (raw + `_offset`) × `_scale`, as the IIO ABI says; a missing sibling is scale 1, offset 0. */
  private async readIioRaw(rawPath: string): Promise<number> {
    const raw = await this.readNumber(rawPath);
    if (!Number.isFinite(raw)) return raw;
    const scale = await this.readSibling(rawPath, 'scale', 1);
    const offset = await this.readSibling(rawPath, 'offset', 0);
    return iioProcessed(raw, scale, offset);
  }

  /** The first of the channel's own or the type's shared `_scale`/`_offset` files, or `missing`. */
  private async readSibling(rawPath: string, info: 'scale' | 'offset', missing: number): Promise<number> {
    for (const path of iioSiblings(rawPath, info)) {
      const text = await this.readText(path).catch((err: NodeJS.ErrnoException) => {
        if (err?.code === 'ENOENT') return undefined;
        throw describeReadError(path, err);
      });
      if (text === undefined) continue;
      const value = this.numberIn(path, text);
      if (!Number.isFinite(value)) throw new Error(`${path}: the ${info} is not a finite number`);
      return value;
    }
    return missing;
  }

  private async readNumber(path: string): Promise<number> {
    let text: string;
    try {
      text = await this.readText(path);
    } catch (err) {
      throw describeReadError(path, err);
    }
    return this.numberIn(path, text);
  }

  private numberIn(path: string, text: string): number {
    const parsed = parseFileNumber(text);
    if (!parsed.ok) throw new Error(`${path}: ${parsed.problem}`);
    return parsed.value;
  }
}

/** A read error a person can act on; EIO/ETIMEDOUT are a device that did not answer this time. */
function describeReadError(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new Error(`${path} does not exist (device gone, or a wrong path)`);
  if (code === 'EACCES') return new Error(`${path} is not readable by this user`);
  if (code === 'EISDIR') return new Error(`${path} is a directory, not a file`);
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'EIO' || code === 'ETIMEDOUT') {
    // A DHT22 on the dht11 driver fails a read in a few: routine, the last reading is kept.
    return new Error(`${path}: the device did not answer (${code}): ${message}`);
  }
  return new Error(`${path}: read failed: ${message}`);
}
