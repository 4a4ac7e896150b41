/**
 * The PWM half of `homeostat safe`: drives each hardware PWM channel to its safe level through
 * sysfs alone (drivers/pwm.ts, plain file writes: no database, no broker). A safe level the
 * disabled channel gives (0, or 1 for polarity inversed: its pin idles low, which an inverting
 * driver turns into full on) disables it when the period is not known: duty_cycle 0, then
 * enable 0, read back. Any other (a cooling fan that must run, or with the period known an
 * inversed one) is set through the driver at the configured period and polarity and read back.
 * A safe level that cannot be reached (no period known) leaves the channel as it is and is
 * reported not confirmed safe. Each channel has its own deadline; a failure on one never stops
 * the others.
 */
import { join } from 'node:path';
import { filePwmIo, type PwmIo, PwmOutput, pwmChipDir } from '../drivers/pwm.js';

/** A PWM output as `safe` needs it; `periodNs` may be unknown (read from a broken file). */
export interface SafePwm {
  id: string;
  chip: number;
  channel: number;
  /** 0..1; the level a disabled channel gives (0, 1 if inversed) is reached without `periodNs`. */
  safeLevel: number;
  periodNs?: number | undefined;
  polarity?: 'normal' | 'inversed' | undefined;
}

/** What happened to one channel: the level read back after, 0 meaning disabled. */
export type SafePwmOutcome =
  | { id: string; ok: true; level: number }
  | { id: string; ok: false; error: string };

export interface SafePwmOptions {
  sysfsRoot: string;
  io?: PwmIo | undefined;
  /** Longest time one channel may take, ms. Default 2000. */
  timeoutMs?: number | undefined;
}

const DEFAULT_TIMEOUT_MS = 2_000;

/** Drives one channel to its safe level (module comment); never rejects. */
export async function drivePwmSafe(pwm: SafePwm, opts: SafePwmOptions): Promise<SafePwmOutcome> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from sysfs within ${timeoutMs} ms`)), timeoutMs);
  });
  const work = drive(pwm, opts);
  work.catch(() => {});
  try {
    return await Promise.race([work, deadline]);
  } catch (error) {
    return { id: pwm.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

async function drive(pwm: SafePwm, opts: SafePwmOptions): Promise<SafePwmOutcome> {
  const { safeLevel, periodNs } = pwm;
  if (!(safeLevel >= 0 && safeLevel <= 1)) {
    throw new Error(`its safe level ${safeLevel} is not within 0..1; left as it is`);
  }
  if (periodNs !== undefined && (safeLevel > 0 || pwm.polarity === 'inversed')) {
    return setLevel(pwm, periodNs, opts);
  }
  if (safeLevel === disabledLevel(pwm)) return disable(pwm, opts);
  throw new Error(
    `its safe level ${safeLevel} needs its period (periodMs or frequencyHz), which the config does not give; left as it is`,
  );
}

/** Through the driver: the configured period and polarity, then the safe level, read back. */
async function setLevel(pwm: SafePwm, periodNs: number, opts: SafePwmOptions): Promise<SafePwmOutcome> {
  const output = new PwmOutput({
    id: pwm.id,
    chip: pwm.chip,
    channel: pwm.channel,
    periodNs,
    polarity: pwm.polarity ?? 'normal',
    sysfsRoot: opts.sysfsRoot,
    io: opts.io,
  });
  await output.start();
  await output.write(pwm.safeLevel);
  const level = await output.observe();
  if (level === undefined || Math.abs(level - pwm.safeLevel) > 0.005) {
    throw new Error(`set to ${pwm.safeLevel} but reads back ${level ?? 'nothing'}`);
  }
  return { id: pwm.id, ok: true, level };
}

/**
 * Disabled without knowing the period (a broken file may not say it): duty_cycle 0 is below any
 * period. A channel not exported is disabled already (the kernel exports channels disabled).
 */
async function disable(pwm: SafePwm, opts: SafePwmOptions): Promise<SafePwmOutcome> {
  const io = opts.io ?? filePwmIo;
  const dir = join(pwmChipDir(opts.sysfsRoot, pwm.chip), `pwm${pwm.channel}`);
  const enable = await io.read(join(dir, 'enable')).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (enable === undefined) {
    await io.read(join(pwmChipDir(opts.sysfsRoot, pwm.chip), 'npwm'));
    return { id: pwm.id, ok: true, level: disabledLevel(pwm) };
  }
  // A duty_cycle that cannot be written does not stop the disable: enable 0 is what matters
  // (disabled, the pin idles low whatever the duty).
  await io.write(join(dir, 'duty_cycle'), '0').catch(() => undefined);
  await io.write(join(dir, 'enable'), '0');
  const after = await io.read(join(dir, 'enable'));
  if (after !== '0') throw new Error(`wrote enable 0 but it reads back ${JSON.stringify(after)}`);
  return { id: pwm.id, ok: true, level: disabledLevel(pwm) };
}

/** `fan (pwm pwmchip0/pwm0): disabled` or `… at 100 %`, or why not. */
export function describePwmOutcome(pwm: SafePwm, outcome: SafePwmOutcome): string {
  const head = `${pwm.id} (pwm pwmchip${pwm.chip}/pwm${pwm.channel})`;
  if (!outcome.ok) return `${head}: FAILED, not driven safe: ${outcome.error}`;
  if (outcome.level === 0) return `${head}: disabled (duty 0), its safe state`;
  return `${head}: at ${Math.round(outcome.level * 1000) / 10} %, its safe level`;
}

/** Every PWM output of every group at once; one line each and a summary; returns the failures. */
export async function driveAllPwmsSafe(
  groups: readonly { pwms: readonly SafePwm[]; sysfsRoot: string }[],
  opts: { sysfsRoot?: string | undefined; io?: PwmIo | undefined; timeoutMs?: number | undefined },
  write: (line: string) => void,
): Promise<number> {
  const all = groups.flatMap((group) =>
    group.pwms.map((pwm) => ({ pwm, sysfsRoot: opts.sysfsRoot ?? group.sysfsRoot })),
  );
  if (all.length === 0) return 0;
  const outcomes = await Promise.all(
    all.map(({ pwm, sysfsRoot }) => drivePwmSafe(pwm, { sysfsRoot, io: opts.io, timeoutMs: opts.timeoutMs })),
  );
  for (const [i, { pwm }] of all.entries()) write(describePwmOutcome(pwm, outcomes[i]!));
  const failed = all.filter((_, i) => !outcomes[i]!.ok);
  write(
    `homeostat safe: ${all.length - failed.length} of ${all.length} PWM output(s) at their safe level` +
      (failed.length > 0 ? `; ${failed.length} FAILED` : ''),
  );
  for (const { pwm } of failed)
    write(`homeostat safe: NOT CONFIRMED SAFE: ${pwm.id} (pwmchip${pwm.chip}/pwm${pwm.channel})`);
  return failed.length;
}

/** What the load sees of a disabled channel (its pin idles low): full on through an inverting driver. */
function disabledLevel(pwm: SafePwm): number {
  return pwm.polarity === 'inversed' ? 1 : 0;
}
