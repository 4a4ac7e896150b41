import type { ReadTextFile } from './ds18b20.js';
import { readSysfsText } from './gpio/sysfs-read.js';
import type { SensorDriver } from './types.js';

/** Options of a {@link FileValueSensor}. */
export interface FileValueOptions {
  id: string;
  /** Absolute path of a file holding one number (a sysfs attribute, a 1-Wire-like device). */
  path: string;
  /** Multiplier applied to the number read, e.g. 0.001 for millidegrees. Default 1. */
  scale?: number | undefined;
  /** Added after scaling, in the reading's unit. Default 0. */
  offset?: number | undefined;
  /** Readings (after scale and offset) outside this range are rejected. Default: no check. */
  plausible?: { min: number; max: number } | undefined;
  /** Default: {@link readSysfsText} (at most one page read, asynchronously). */
  readFile?: ReadTextFile | undefined;
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
 * (millidegrees: scale 0.001). The read is asynchronous and bounded to one page, so a slow or
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
    this.path = opts.path;
    this.scale = scale;
    this.offset = offset;
    this.plausible = opts.plausible;
    this.readText = opts.readFile ?? ((path) => readSysfsText(path));
  }

  /**
   * The file's number × scale + offset; throws why there is none. A file saying `nan` or `inf`
   * reads as that value, as an MQTT sensor's does: the loops go safe in this cycle rather than
   * when the last good reading goes stale.
   */
  async read(): Promise<number> {
    const parsed = parseFileNumber(await this.readFile());
    if (!parsed.ok) throw new Error(`${this.path}: ${parsed.problem}`);
    if (!Number.isFinite(parsed.value)) return parsed.value;
    // Rounded to 12 significant digits: 45123 × 0.001 reads 45.123, not 45.123000000000005.
    const value = Number((parsed.value * this.scale + this.offset).toPrecision(12));
    if (this.plausible && !(value >= this.plausible.min && value <= this.plausible.max)) {
      const { min, max } = this.plausible;
      throw new Error(`${this.path}: ${value} is outside the plausible range ${min}..${max}`);
    }
    return value;
  }

  private async readFile(): Promise<string> {
    try {
      return await this.readText(this.path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      if (code === 'ENOENT') throw new Error(`${this.path} does not exist (device gone, or a wrong path)`);
      if (code === 'EACCES') throw new Error(`${this.path} is not readable by this user`);
      if (code === 'EISDIR') throw new Error(`${this.path} is a directory, not a file`);
      throw new Error(`${this.path}: read failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
