import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readSysfsText } from '../../drivers/gpio/sysfs-read.js';
import { PWM_OVERLAY_FIX, pwmChipDir } from '../../drivers/pwm.js';
import { isWritable } from '../../drivers/sysfs-wait.js';
import type { CheckResult, DoctorEnv, KindDoctor } from '../types.js';

/** The fields of a pwm section the check reads. */
interface PwmSection {
  chip: number;
  channel: number;
}

const PERMISSION_FIX =
  'add the homeostat user to the gpio group (sudo usermod -aG gpio homeostat): Raspberry Pi OS hands ' +
  '/sys/class/pwm to group gpio';

/**
 * Per pwm actuator, without touching the output: the chip is there
 * (`<sysfsRoot>/class/pwm/pwmchipN/npwm`), the channel is below npwm, and this user may write
 * `export` (or the exported channel's `enable`).
 */
async function checkPwm(
  items: { id: string; section: PwmSection }[],
  env: DoctorEnv,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const { id, section } of items) {
    const name = `PWM actuators.${id}`;
    const chipDir = pwmChipDir(env.sysfsRoot, section.chip);
    const npwm = await readSysfsText(join(chipDir, 'npwm')).then(
      (text) => Number.parseInt(text.trim(), 10),
      () => undefined,
    );
    if (npwm === undefined) {
      const present = await readdir(join(env.sysfsRoot, 'class/pwm')).catch(() => []);
      const detail = `${chipDir} is missing${present.length > 0 ? ` (present: ${present.join(', ')})` : ''}`;
      results.push({ name, status: 'fail', detail, fix: PWM_OVERLAY_FIX });
      continue;
    }
    if (!(section.channel < npwm)) {
      results.push({
        name,
        status: 'fail',
        detail: `pwmchip${section.chip} has ${npwm} channel(s) (0..${npwm - 1}), not ${section.channel}`,
        fix: `set actuators.${id}.channel below ${npwm}, or use the chip the overlay made`,
      });
      continue;
    }
    const channelDir = join(chipDir, `pwm${section.channel}`);
    const exported = await isWritable(join(channelDir, 'enable'));
    const writable = exported || (await isWritable(join(chipDir, 'export')));
    results.push(
      writable
        ? {
            name,
            status: 'ok',
            detail: `pwmchip${section.chip}/pwm${section.channel}${exported ? ' (exported)' : ''}, ${npwm} channel(s)`,
          }
        : {
            name,
            status: 'fail',
            detail: `${join(chipDir, 'export')} is not writable by this user`,
            fix: PERMISSION_FIX,
          },
    );
  }
  return results;
}

export const pwmDoctor: KindDoctor<PwmSection> = { check: checkPwm };
