/**
 * A hardware PWM channel through sysfs (Documentation/ABI/testing/sysfs-class-pwm):
 * `<root>/class/pwm/pwmchipN/` has `npwm` (channels), `export` and `unexport`; writing M to
 * `export` makes `pwmM/` with `period` and `duty_cycle` (ns; duty ≤ period), `enable` (0/1) and
 * `polarity` (`normal`/`inversed`, writable only while disabled).
 *
 * Level 0..1 is duty_cycle / period. Level 0 is the safe state: the channel disabled (enable 0,
 * duty_cycle 0), or, inversed, enabled at duty_cycle 0. `observe()` reads enable, duty_cycle,
 * period and polarity back every cycle, so a channel changed behind the daemon's back shows as
 * drift (a polarity not the configured one as unknown) and is commanded again; the next
 * `write()` puts that polarity back first.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ActuatorLevel } from '../core/types.js';
import { readSysfsText } from './gpio/sysfs-read.js';
import { isWritable, waitWritable } from './sysfs-wait.js';
import type { ActuatorDriver } from './types.js';

/** The sysfs reads and writes a {@link PwmOutput} makes; tests wrap the default to record them. */
export interface PwmIo {
  /** A sysfs attribute's text, trimmed. */
  read(path: string): Promise<string>;
  write(path: string, text: string): Promise<void>;
}

export const filePwmIo: PwmIo = {
  read: async (path) => (await readSysfsText(path, 64)).trim(),
  write: (path, text) => writeFile(path, text),
};

/** Options of a {@link PwmOutput}. */
export interface PwmOutputOptions {
  id: string;
  /** N of `pwmchipN`. */
  chip: number;
  /** M of `pwmM`: the channel, below the chip's `npwm`. */
  channel: number;
  /** The period written at start, ns (an integer, > 0). */
  periodNs: number;
  polarity: 'normal' | 'inversed';
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  io?: PwmIo | undefined;
  /** Longest wait for the kernel and udev to make a just-exported channel writable, ms. Default 1000. */
  exportWaitMs?: number | undefined;
}

/** What `start()` found, for the daemon's log. */
export interface PwmChannelInfo {
  /** The channel was already enabled at this period and polarity and was taken over as it was. */
  adopted: boolean;
}

const DEFAULT_EXPORT_WAIT_MS = 1_000;

/** `<root>/class/pwm/pwmchipN`. */
export function pwmChipDir(sysfsRoot: string, chip: number): string {
  return join(sysfsRoot, 'class/pwm', `pwmchip${chip}`);
}

/** The fix for a chip that is not there. */
export const PWM_OVERLAY_FIX =
  'enable hardware PWM in /boot/firmware/config.txt (dtoverlay=pwm,pin=18,func=2 or dtoverlay=pwm-2chan) and reboot';

/**
 * A PWM output (see the module comment). Start never turns the output on: a channel found
 * enabled at the configured period and polarity (the daemon restarted) is adopted as it is, so
 * the first cycle observes before it acts; any other is disabled, its duty set to 0, then its
 * period and polarity written.
 */
export class PwmOutput implements ActuatorDriver {
  readonly id: string;
  readonly simulated = false;
  readonly kind = 'continuous' as const;
  private readonly opts: PwmOutputOptions;
  private readonly io: PwmIo;
  private readonly dir: string;
  private started = false;
  private info: PwmChannelInfo | undefined;
  /** observe() found the polarity changed behind the daemon's back: the next write puts it back. */
  private polarityDrifted = false;

  constructor(opts: PwmOutputOptions) {
    if (!(Number.isInteger(opts.periodNs) && opts.periodNs > 0)) {
      throw new RangeError(`pwm ${opts.id}: period must be a whole number of ns > 0, got ${opts.periodNs}`);
    }
    this.id = opts.id;
    this.opts = opts;
    this.io = opts.io ?? filePwmIo;
    this.dir = join(pwmChipDir(opts.sysfsRoot, opts.chip), `pwm${opts.channel}`);
  }

  /** What `start()` found; `undefined` before it. */
  get channel(): PwmChannelInfo | undefined {
    return this.info;
  }

  /** Exports the channel if needed, then adopts it or configures it disabled (class comment). */
  async start(): Promise<void> {
    if (this.started) return;
    await this.exportChannel();
    const adopted = await this.runningAsConfigured();
    if (!adopted) await this.configure();
    this.info = { adopted };
    this.started = true;
  }

  /** Leaves the channel as last commanded (the daemon drives the safe level before stopping). */
  async stop(): Promise<void> {
    this.started = false;
  }

  /**
   * The actual level: duty_cycle / period when enabled, 0 when disabled (1 if inversed);
   * undefined when unreadable, or at a polarity other than the configured one (turned back to
   * normal, an inversed channel at duty 0 would read 0 while its load runs full).
   */
  async observe(): Promise<ActuatorLevel> {
    if (!this.started) return undefined;
    try {
      const [enable, duty, period, polarity] = await Promise.all(
        ['enable', 'duty_cycle', 'period', 'polarity'].map((name) => this.io.read(join(this.dir, name))),
      );
      this.polarityDrifted = polarity !== this.opts.polarity;
      if (this.polarityDrifted) return undefined;
      // Disabled, the pin idles low: off for a normal load, full on for an inverted one.
      if (enable === '0') return this.opts.polarity === 'inversed' ? 1 : 0;
      const dutyNs = Number(duty);
      const periodNs = Number(period);
      if (enable !== '1' || !(periodNs > 0) || !(dutyNs >= 0 && dutyNs <= periodNs)) return undefined;
      return dutyNs / periodNs;
    } catch {
      return undefined;
    }
  }

  /**
   * A polarity `observe()` found changed is put back first: enable 0, then polarity (the kernel
   * takes it only while disabled). Then level 0: enable 0, then duty_cycle 0, tried even when
   * enable 0 fails (then its error is thrown) — for polarity inversed, duty_cycle 0 then enable
   * 1 instead (disabled, its pin would idle low: full on). Any other: duty_cycle round(level ×
   * period), then enable 1 (harmless when already on). Rejects on a level outside 0..1
   * (RangeError), before `start()`, and when the kernel refuses a write (the loop reports it).
   */
  async write(level: number): Promise<void> {
    if (!(level >= 0 && level <= 1)) {
      throw new RangeError(`pwm ${this.id}: level must be within 0..1, got ${level}`);
    }
    if (!this.started) throw new Error(`pwm ${this.id}: ${this.dir} not started`);
    await this.restorePolarity();
    const dutyNs = Math.round(level * this.opts.periodNs);
    if (dutyNs === 0 && this.opts.polarity === 'inversed') {
      await this.attr('duty_cycle', '0');
      await this.attr('enable', '1');
      return;
    }
    if (dutyNs === 0) {
      // Disabled first: a duty_cycle that cannot be written must not keep the output on; and
      // duty 0 even when the disable fails: an output still enabled is then at least off.
      const enableError = await this.attr('enable', '0').then(
        () => undefined,
        (error: unknown) => error,
      );
      await this.attr('duty_cycle', '0').catch((error: unknown) => {
        if (enableError === undefined) throw error;
      });
      if (enableError !== undefined) throw enableError;
      return;
    }
    await this.attr('duty_cycle', String(dutyNs));
    await this.attr('enable', '1');
  }

  /**
   * The polarity observe() found changed, written back while disabled. Only then: a read in
   * every write would slow every command for a change that observe() sees each cycle anyway.
   */
  private async restorePolarity(): Promise<void> {
    if (!this.polarityDrifted) return;
    await this.attr('enable', '0');
    await this.attr('polarity', this.opts.polarity);
    this.polarityDrifted = false;
  }

  /** The chip and channel exist; the channel exported and writable (udev hands it to group gpio). */
  private async exportChannel(): Promise<void> {
    const chipDir = pwmChipDir(this.opts.sysfsRoot, this.opts.chip);
    const npwmText = await this.io.read(join(chipDir, 'npwm')).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT')
        throw new Error(`pwm ${this.id}: no PWM chip ${chipDir}: ${PWM_OVERLAY_FIX}`);
      throw error;
    });
    const npwm = Number.parseInt(npwmText, 10);
    if (!(this.opts.channel < npwm)) {
      throw new RangeError(
        `pwm ${this.id}: pwmchip${this.opts.chip} has channels 0..${npwm - 1}, not ${this.opts.channel}`,
      );
    }
    const enablePath = join(this.dir, 'enable');
    if (await isWritable(enablePath)) return;
    await this.io.write(join(chipDir, 'export'), String(this.opts.channel)).catch((error) => {
      throw this.kernelError(error, 'export', String(this.opts.channel));
    });
    await waitWritable(enablePath, this.opts.exportWaitMs ?? DEFAULT_EXPORT_WAIT_MS, 'gpio');
  }

  /** Enabled, at the configured period and polarity: a running output to adopt without a glitch. */
  private async runningAsConfigured(): Promise<boolean> {
    const read = (name: string) => this.io.read(join(this.dir, name)).catch(() => undefined);
    const [enable, period, polarity] = await Promise.all([read('enable'), read('period'), read('polarity')]);
    return enable === '1' && period === String(this.opts.periodNs) && polarity === this.opts.polarity;
  }

  /**
   * Disabled, duty 0, then period and polarity (then enabled again at duty 0 if inversed). In
   * this order: the kernel refuses a period below the duty cycle, and polarity while enabled.
   */
  private async configure(): Promise<void> {
    await this.attr('enable', '0');
    await this.attr('duty_cycle', '0');
    await this.attr('period', String(this.opts.periodNs));
    const polarity = await this.io.read(join(this.dir, 'polarity')).catch(() => undefined);
    if (polarity !== this.opts.polarity) await this.attr('polarity', this.opts.polarity);
    // Inversed, level 0 is enabled at duty 0 (pin high): disabled, the pin idles low, full on.
    if (this.opts.polarity === 'inversed') await this.attr('enable', '1');
  }

  private async attr(name: string, text: string): Promise<void> {
    try {
      await this.io.write(join(this.dir, name), text);
    } catch (error) {
      throw this.kernelError(error, name, text);
    }
  }

  /** A refused write as a line to act on; the errno is kept as the cause. */
  private kernelError(error: unknown, name: string, text: string): Error {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const what = `pwm ${this.id}: writing ${text} to ${join(this.dir, name)}`;
    const message = error instanceof Error ? error.message : String(error);
    switch (code) {
      case 'EINVAL':
        return new Error(
          name === 'period'
            ? `${what}: the chip does not take a period of ${text} ns (EINVAL); choose a period within what ` +
                "it counts (the Pi's 32-bit counter at its PWM clock)"
            : `${what}: rejected by the kernel (EINVAL)`,
          { cause: error },
        );
      case 'EACCES':
      case 'EPERM':
        return new Error(`${what}: permission denied: the homeostat user must be in group gpio`, {
          cause: error,
        });
      case 'EBUSY':
        return new Error(`${what}: busy, the channel is held by a kernel driver (pwm-fan, audio)`, {
          cause: error,
        });
      default:
        return new Error(`${what}: ${message}`, { cause: error });
    }
  }
}
