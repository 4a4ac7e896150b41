/**
 * The GPIO half of `homeostat safe`: drives each relay to its safe level through sysfs alone
 * (no onoff, whose sysfs root is fixed and whose native addon may be what broke). Every pin
 * has a deadline, so a wedged sysfs file cannot make it hang; a failure on one pin never stops
 * the others.
 *
 * Per relay, the pin ends as an output at the raw level that means "safe" (released, for
 * `safeState: off`, whatever the board's active-low wiring):
 * - exported output already at that level: left untouched (no write, no glitch);
 * - exported output at the other level: `value` written once (one clean transition);
 * - exported input, or not exported: exported, then `direction` written as `high`/`low`,
 *   which sets the raw level atomically (the kernel ignores `active_low` there, so `out`
 *   would briefly energise an active-low relay), then `active_low` as configured so the next
 *   daemon adopts the pin as its own.
 */
import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type GpioChipOverride, resolveGpio } from '../drivers/gpio/chip.js';
import { readSysfsText } from '../drivers/gpio/sysfs-read.js';

/** A GPIO relay as `safe` needs it: where it is, how it is wired, which logical level is safe. */
export interface SafeRelay {
  id: string;
  bcm: number;
  activeLow: boolean;
  /** Logical level to end at: 0 = released (`safeState: off`), 1 = energised (`safeState: on`). */
  safeLevel: 0 | 1;
}

/**
 * The few sysfs operations `safe` uses. The default works on real files; tests wrap it to
 * record writes, simulate the kernel's `export`, or make a pin fail or hang.
 */
export interface SysfsIo {
  /** The first bytes of a file, trimmed (sysfs attributes are a few bytes). */
  read(path: string): Promise<string>;
  write(path: string, text: string): Promise<void>;
  /** The file exists and this process may write it (udev fixes permissions after an export). */
  writable(path: string): Promise<boolean>;
}

/** Bytes read from one sysfs attribute: `out`, `0`, `1`; a hostile file cannot make it grow. */
const MAX_ATTRIBUTE_BYTES = 64;

export const fileSysfsIo: SysfsIo = {
  read: async (path) => (await readSysfsText(path, MAX_ATTRIBUTE_BYTES)).trim(),
  write: (path, text) => writeFile(path, text),
  writable: (path) =>
    access(path, constants.W_OK).then(
      () => true,
      () => false,
    ),
};

/** Options of {@link driveRelaySafe} and {@link driveAllSafe}. */
export interface SafeGpioOptions {
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  chip?: GpioChipOverride | undefined;
  io?: SysfsIo | undefined;
  /** Longest time one pin may take, ms. Default 2000 (a healthy pin takes a few ms). */
  pinTimeoutMs?: number | undefined;
  /**
   * Aborted when a deadline over all pins has passed (safe.ts): the outcome is reported from
   * there, so the pin's own timer is dropped rather than left to hold the process for its length.
   */
  signal?: AbortSignal | undefined;
  /** Longest wait for the kernel and udev to make a just-exported pin writable, ms. Default 1000. */
  exportWaitMs?: number | undefined;
  /**
   * Holds each relay whose work has not settled yet, also past its deadline: a sysfs call that
   * never returns keeps the process alive (safe.ts ends it then).
   */
  unsettled?: Set<SafeRelay> | undefined;
}

/** What happened to one relay. Levels are raw pin levels (what the relay board sees). */
export type SafeOutcome =
  | {
      id: string;
      ok: true;
      /** `untouched`: already safe; `written`: value changed; `exported`: made an output at the safe level. */
      action: 'untouched' | 'written' | 'exported';
      sysfsNumber: number;
      /** Raw level before, when the pin was an output. */
      rawBefore?: 0 | 1;
      rawAfter: 0 | 1;
    }
  | { id: string; ok: false; sysfsNumber?: number; error: string };

const DEFAULT_PIN_TIMEOUT_MS = 2_000;
const DEFAULT_EXPORT_WAIT_MS = 1_000;
const EXPORT_POLL_MS = 10;

/** The raw pin level that means logical `level` on a board wired active-low or not. */
export function rawOf(level: 0 | 1, activeLow: boolean): 0 | 1 {
  return (activeLow ? 1 - level : level) as 0 | 1;
}

function bit(text: string, what: string): 0 | 1 {
  if (text === '0' || text === '1') return Number(text) as 0 | 1;
  throw new Error(`${what} reads ${JSON.stringify(text.slice(0, 20))}, expected 0 or 1`);
}

/** Drives one relay to its safe level (see the module comment); never rejects. */
export async function driveRelaySafe(relay: SafeRelay, opts: SafeGpioOptions): Promise<SafeOutcome> {
  const io = opts.io ?? fileSysfsIo;
  const timeoutMs = opts.pinTimeoutMs ?? DEFAULT_PIN_TIMEOUT_MS;
  let sysfsNumber: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from sysfs within ${timeoutMs} ms (a hung GPIO driver?)`)),
      timeoutMs,
    );
  });
  opts.signal?.addEventListener('abort', () => clearTimeout(timer), { once: true });
  const work = drivePin(relay, opts, io, (resolved) => {
    sysfsNumber = resolved;
  });
  opts.unsettled?.add(relay);
  // Past its deadline the pin is reported failed; a late error of its work must not crash the command.
  work.catch(() => {}).finally(() => opts.unsettled?.delete(relay));
  try {
    return await Promise.race([work, deadline]);
  } catch (error) {
    return {
      id: relay.id,
      ok: false,
      ...(sysfsNumber === undefined ? {} : { sysfsNumber }),
      error: gpioErrorMessage(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** One resolved pin: the relay's id, its sysfs number and directory, and the safe raw level. */
interface PinTarget {
  id: string;
  sysfsNumber: number;
  dir: string;
  target: 0 | 1;
}

/** The pin's work, without a deadline: resolve it, then rewrite an output or make it one. */
async function drivePin(
  relay: SafeRelay,
  opts: SafeGpioOptions,
  io: SysfsIo,
  onResolved: (sysfsNumber: number) => void,
): Promise<SafeOutcome> {
  const { sysfsNumber } = await resolveGpio(relay.bcm, { sysfsRoot: opts.sysfsRoot, override: opts.chip });
  onResolved(sysfsNumber);
  const dir = join(opts.sysfsRoot, 'class/gpio', `gpio${sysfsNumber}`);
  const pin: PinTarget = { id: relay.id, sysfsNumber, dir, target: rawOf(relay.safeLevel, relay.activeLow) };
  const direction = await readOptional(io, join(dir, 'direction'));
  if (direction !== undefined && direction !== 'in') return rewriteOutput(io, pin);
  if (direction === undefined) {
    await io.write(join(opts.sysfsRoot, 'class/gpio/export'), String(sysfsNumber));
    await waitWritable(io, join(dir, 'direction'), opts.exportWaitMs ?? DEFAULT_EXPORT_WAIT_MS);
  }
  return makeSafeOutput(io, pin, relay);
}

/** An output (the kernel reads back `out`): `value` is logical under the pin's own active_low. */
async function rewriteOutput(io: SysfsIo, { id, sysfsNumber, dir, target }: PinTarget): Promise<SafeOutcome> {
  const pinActiveLow = bit(await io.read(join(dir, 'active_low')), 'active_low') === 1;
  const rawBefore = rawOf(bit(await io.read(join(dir, 'value')), 'value'), pinActiveLow);
  if (rawBefore === target) {
    return { id, ok: true, action: 'untouched', sysfsNumber, rawBefore, rawAfter: target };
  }
  await io.write(join(dir, 'value'), String(rawOf(target, pinActiveLow)));
  const rawAfter = await readRaw(io, dir);
  if (rawAfter !== target) throw new Error(`wrote the safe level but the pin reads back ${rawAfter}`);
  return { id, ok: true, action: 'written', sysfsNumber, rawBefore, rawAfter };
}

/** An input, or a pin just exported: made an output at the safe level, wired as configured. */
async function makeSafeOutput(io: SysfsIo, pin: PinTarget, relay: SafeRelay): Promise<SafeOutcome> {
  const { dir, target } = pin;
  // `high`/`low` set the raw level with the direction, in one step.
  await io.write(join(dir, 'direction'), target === 1 ? 'high' : 'low');
  await io.write(join(dir, 'active_low'), relay.activeLow ? '1' : '0');
  // The same level again, logically: a no-op on a kernel, where `high`/`low` set `value` already.
  await io.write(join(dir, 'value'), String(relay.safeLevel));
  const rawAfter = await readRaw(io, dir);
  if (rawAfter !== target) throw new Error(`exported at the safe level but the pin reads back ${rawAfter}`);
  return { id: pin.id, ok: true, action: 'exported', sysfsNumber: pin.sysfsNumber, rawAfter };
}

/** Every relay at once (a hung pin must not hold the others back), in the order given. */
export function driveAllSafe(relays: readonly SafeRelay[], opts: SafeGpioOptions): Promise<SafeOutcome[]> {
  return Promise.all(relays.map((relay) => driveRelaySafe(relay, opts)));
}

async function readRaw(io: SysfsIo, dir: string): Promise<0 | 1> {
  const activeLow = bit(await io.read(join(dir, 'active_low')), 'active_low') === 1;
  return rawOf(bit(await io.read(join(dir, 'value')), 'value'), activeLow);
}

async function readOptional(io: SysfsIo, path: string): Promise<string | undefined> {
  try {
    return await io.read(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** After `export`, the kernel creates the pin's files and udev then hands them to group gpio. */
async function waitWritable(io: SysfsIo, path: string, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  while (!(await io.writable(path))) {
    if (Date.now() >= until) {
      throw new Error(`exported, but ${path} is not writable after ${waitMs} ms (udev rule for group gpio?)`);
    }
    await new Promise((resolve) => setTimeout(resolve, EXPORT_POLL_MS));
  }
}

/** A sysfs error as a line a person can act on. */
function gpioErrorMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${message}): the homeostat user must be in group gpio`;
    case 'EBUSY':
      return `busy (${message}): the pin is claimed by a kernel driver (a dtoverlay) or another program`;
    default:
      return message;
  }
}
