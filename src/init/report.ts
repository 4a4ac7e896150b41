/** What `homeostat init` tells the person: the hardware found (and not found), then what to do next. */
import { join } from 'node:path';
import { describePin } from './pins.js';
import type { StarterPlan } from './plan.js';
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

/** A path as a shell word: quoted when it holds anything but the usual path characters. */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** Where install-service puts the config; given there, it needs no --config. */
const INSTALLED_CONFIG = '/etc/homeostat/config.yaml';

/** What was written and the commands to run next. */
export function formatWritten(outPath: string, plan: StarterPlan): string[] {
  const file = shellWord(outPath);
  const summary =
    plan.kind === 'hardware'
      ? `DS18B20 ${plan.sensor.address ?? '(the only one on the bus)'} → relay on ${describePin(plan.relayBcm)}`
      : 'simulated probe and heater';
  const install =
    outPath === INSTALLED_CONFIG
      ? 'sudo homeostat install-service'
      : `sudo homeostat install-service --config ${file}`;
  return [
    `wrote ${outPath}: loop ${plan.loop}, ${summary}, setpoint ${plan.setpointC} °C`,
    'next:',
    `  homeostat validate ${file}    checks the file (edit it first if you like: every block is commented)`,
    `  homeostat doctor ${file}      ${plan.kind === 'hardware' ? 'reads the probe, checks the relay pin and the rest' : 'checks what the daemon needs'}`,
    ...(plan.kind === 'sim'
      ? [`  homeostat run --config ${file} --speed 60    runs it, an hour a minute (Ctrl-C stops)`]
      : []),
    `  ${install}    runs it as a service`,
  ];
}
