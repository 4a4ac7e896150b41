/** What `homeostat init` tells the person: the hardware found (and not found), then what to do next. */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';
import { describeKernelSensor, kernelSensorLine } from './choose-sensor.js';
import { describePin } from './pins.js';
import type { PlannedSensor, StarterPlan } from './plan.js';
import type { HardwareScan } from './scan.js';

/** `21.625 °C`, or why there is no reading. */
function readingOf(sensor: HardwareScan['sensors'][number]): string {
  return sensor.tempC !== undefined ? `${sensor.tempC} °C` : `no reading: ${sensor.error ?? 'unknown'}`;
}

/** The listing: numbered probes with their readings, the GPIO chips, and what is missing and why. */
export function formatScan(scan: HardwareScan): string[] {
  const devices = join(scan.sysfsRoot, 'bus/w1/devices');
  const lines: string[] = [];
  if (!scan.oneWireBus) {
    lines.push(
      `1-Wire: not enabled (no ${devices}): add dtoverlay=w1-gpio to /boot/firmware/config.txt and reboot`,
    );
  } else if (scan.sensors.length === 0) {
    lines.push(
      `1-Wire: no DS18B20 under ${devices}: check the wiring (data on GPIO4, 4.7 kΩ pull-up to 3.3 V)`,
    );
  } else {
    lines.push(`1-Wire: ${scan.sensors.length} DS18B20 under ${devices}`);
    scan.sensors.forEach((sensor, i) => {
      lines.push(`  ${i + 1}) ${sensor.address}  ${readingOf(sensor)}`);
    });
  }
  lines.push(...kernelSensorLines(scan));
  const gpioDir = join(scan.sysfsRoot, 'class/gpio');
  if (scan.chips.length === 0) {
    lines.push(`GPIO: no chips under ${gpioDir} (not a Raspberry Pi, or a kernel without sysfs GPIO)`);
    return lines;
  }
  lines.push(`GPIO: ${scan.chips.length} chip(s) under ${gpioDir}`);
  for (const chip of scan.chips) {
    const main = chip === scan.mainChip ? `, the main controller: GPIO n is sysfs ${chip.base}+n` : '';
    lines.push(`  ${chip.name} "${chip.label}" base ${chip.base} (${chip.ngpio} lines)${main}`);
  }
  if (scan.mainChipProblem) lines.push(`  ${scan.mainChipProblem}`);
  return lines;
}

/**
 * The kernel's temperature sensors (IIO, hwmon), numbered after the probes as the sensor
 * question counts them; nothing when there are none (most machines: doctor says how to add one).
 */
function kernelSensorLines(scan: HardwareScan): string[] {
  if (scan.kernelSensors.length === 0) return [];
  const where = `${join(scan.sysfsRoot, 'bus/iio/devices')} and ${join(scan.sysfsRoot, 'class/hwmon')}`;
  return [
    `Kernel sensors: ${scan.kernelSensors.length} temperature channel(s) under ${where}`,
    ...scan.kernelSensors.map(
      (channel, i) => `  ${scan.sensors.length + i + 1}) ${kernelSensorLine(channel)}`,
    ),
  ];
}

/** A path as a shell word: quoted when it holds anything but the usual path characters. */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** Where install-service puts the config; given there, it needs no --config. */
const INSTALLED_CONFIG = '/etc/homeostat/config.yaml';

/** How the next commands are to be typed. */
export interface Invocation {
  /** `homeostat`, or `node dist/cli.js` before install-service has put `homeostat` on PATH. */
  command: string;
  /** init ran as root: the file is root's and 0640, so reading it again needs sudo. */
  asRoot: boolean;
}

/** Where {@link invocationOf} looks; tests pass their own. */
export interface InvocationSources {
  /** $PATH. */
  pathEnv: string | undefined;
  /** The effective user id; undefined where there is none (Windows). */
  uid: number | undefined;
  /** The script running (process.argv[1]): dist/cli.js. */
  script: string | undefined;
  cwd: string;
  isExecutable: (path: string) => boolean;
}

/** An executable regular file (a symlink to one counts: /usr/local/bin/homeostat is one). */
function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** This process's: $PATH, euid, argv[1], cwd, and a check of the file system. */
export function processInvocationSources(): InvocationSources {
  return {
    pathEnv: process.env.PATH,
    uid: process.geteuid?.(),
    script: process.argv[1],
    cwd: process.cwd(),
    isExecutable: isExecutableFile,
  };
}

/**
 * `homeostat` when an executable of that name is on PATH; otherwise `node` and the running
 * script, relative to the working directory when under it (the documented first run is
 * `sudo node dist/cli.js init` in the checkout, before install-service links `homeostat`).
 */
export function invocationOf(sources: InvocationSources = processInvocationSources()): Invocation {
  const asRoot = sources.uid === 0;
  // Empty entries (the working directory, by an old convention) are skipped: not what a person means.
  const dirs = (sources.pathEnv ?? '').split(delimiter).filter(Boolean);
  if (sources.script === undefined || dirs.some((dir) => sources.isExecutable(join(dir, 'homeostat')))) {
    return { command: 'homeostat', asRoot };
  }
  const fromCwd = relative(sources.cwd, sources.script);
  const script = fromCwd === '' || fromCwd.startsWith('..') || isAbsolute(fromCwd) ? sources.script : fromCwd;
  return { command: `node ${shellWord(script)}`, asRoot };
}

/** The sensor of a hardware starter, in the line that says what was written. */
function sensorSummary(sensor: PlannedSensor): string {
  return sensor.kind === 'file_value'
    ? describeKernelSensor(sensor.channel)
    : `DS18B20 ${sensor.address ?? '(the only one on the bus)'}`;
}

/** What was written and the commands to run next, typed as `invocation` says. */
export function formatWritten(
  outPath: string,
  plan: StarterPlan,
  invocation: Invocation = invocationOf(),
): string[] {
  const file = shellWord(outPath);
  const summary =
    plan.kind === 'hardware'
      ? `${sensorSummary(plan.sensor)} → relay on ${describePin(plan.relayBcm)}`
      : 'simulated probe and heater';
  const { command } = invocation;
  // Commands that read the file: as the user who could write it.
  const reading = invocation.asRoot ? `sudo ${command}` : command;
  const install =
    outPath === INSTALLED_CONFIG
      ? `sudo ${command} install-service`
      : `sudo ${command} install-service --config ${file}`;
  return [
    `wrote ${outPath}: loop ${plan.loop}, ${summary}, setpoint ${plan.setpointC} °C`,
    'next:',
    `  ${reading} validate ${file}    checks the file (edit it first if you like: every block is commented)`,
    `  ${reading} doctor ${file}      ${plan.kind === 'hardware' ? 'reads the probe, checks the relay pin and the rest' : 'checks what the daemon needs'}`,
    ...(plan.kind === 'sim'
      ? [`  ${reading} run --config ${file} --speed 60    runs it, an hour a minute (Ctrl-C stops)`]
      : []),
    `  ${install}    runs it as a service`,
  ];
}
