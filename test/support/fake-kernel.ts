/**
 * The one part of the kernel a fixture sysfs tree cannot do by itself: create a device's
 * directory when its number is written to an `export` file (GPIO: `class/gpio/export` →
 * `gpioN/`; PWM: `class/pwm/pwmchipN/export` → `pwmM/`). No kernel runs under a temp dir, so
 * this watcher plays that part, and only that part: the files it creates hold what the
 * kernel's hold right after an export, and what the drivers write later stays as written
 * (nothing here follows `direction` or `enable`). Whoever writes the export, this process or a
 * daemon run as a child, the watcher sees it (fs.watch: inotify on the file).
 */
import { existsSync, type FSWatcher, mkdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HasAfter } from './tmp.js';

/** Files of a just-exported sysfs GPIO: an input, level 0, not inverted, no edge. */
export const EXPORTED_GPIO_FILES = { direction: 'in\n', value: '0\n', active_low: '0\n', edge: 'none\n' };

/** Files of a just-exported PWM channel: disabled, period and duty cycle 0, normal polarity. */
export const EXPORTED_PWM_FILES = { period: '0\n', duty_cycle: '0\n', enable: '0\n', polarity: 'normal\n' };

/**
 * Watches `exportFile`; each number written there makes `<dirOf(n)>/` with `files` (unless it
 * exists). `exported` lists the numbers exported, in order; `stop()` ends the watch (also after `t`).
 */
export function fakeExport(
  t: HasAfter,
  exportFile: string,
  dirOf: (n: number) => string,
  files: Record<string, string>,
): { exported: number[]; stop(): void } {
  const exported: number[] = [];
  const onWrite = () => {
    const text = readFileSync(exportFile, 'utf8').trim();
    if (!/^\d+$/.test(text)) return;
    const dir = dirOf(Number(text));
    if (existsSync(dir)) return;
    exported.push(Number(text));
    mkdirSync(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  };
  const watcher: FSWatcher = watch(exportFile, onWrite);
  const stop = () => watcher.close();
  t.after(stop);
  return { exported, stop };
}

/** A sysfs GPIO `export` under `sysfsRoot` that creates `gpioN/` as the kernel would. */
export function fakeGpioExport(t: HasAfter, sysfsRoot: string) {
  const gpioDir = join(sysfsRoot, 'class/gpio');
  return fakeExport(t, join(gpioDir, 'export'), (n) => join(gpioDir, `gpio${n}`), EXPORTED_GPIO_FILES);
}

/** A PWM chip's `export` under `sysfsRoot` that creates `pwmM/` as the kernel would. */
export function fakePwmExport(t: HasAfter, sysfsRoot: string, chip: number) {
  const chipDir = join(sysfsRoot, 'class/pwm', `pwmchip${chip}`);
  return fakeExport(t, join(chipDir, 'export'), (n) => join(chipDir, `pwm${n}`), EXPORTED_PWM_FILES);
}
