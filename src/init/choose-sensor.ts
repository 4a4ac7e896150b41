/**
 * Which sensor a hardware starter's loop reads: a DS18B20 on the 1-Wire bus, or a temperature
 * channel of the kernel's own drivers (IIO, hwmon: a BME280, an SHT3x…) written as a
 * `file_value` sensor on its stable path pattern. From `--sensor`, the answer to a question
 * (by its number in init's listing), or the first found. The listing numbers the probes first,
 * then the kernel sensors (report.ts prints them so).
 */
import { describeReading, type KernelChannel } from '../drivers/kernel-sensors.js';
import { type PlannedSensor, parseSensorFlag } from './plan.js';
import { type Ask, askUntil } from './prompt.js';
import type { HardwareScan } from './scan.js';

/** A kernel sensor as init names it: `bme280 (i2c 1-0076) in_temp_input`. */
export function describeKernelSensor(channel: KernelChannel): string {
  return `${channel.driver} (${channel.place}) ${channel.channel}`;
}

/** One line of init's listing for a kernel sensor: where, the reading, the path and scale written. */
export function kernelSensorLine(channel: KernelChannel): string {
  return `${describeKernelSensor(channel)}  ${describeReading(channel)}  (path ${channel.configPath}, scale ${channel.scale})`;
}

/** The sensor a --sensor value names among what was found; a path must be one init lists. */
function sensorOfFlag(scan: HardwareScan, flag: string): PlannedSensor | { error: string } {
  if (!flag.startsWith('/')) return { address: flag, pinned: true };
  const channel = scan.kernelSensors.find((c) => c.configPath === flag);
  if (channel) return { kind: 'file_value', channel };
  const listed = scan.kernelSensors.map((c) => c.configPath);
  return {
    error:
      `--sensor ${flag}: no such kernel sensor under ${scan.sysfsRoot}` +
      (listed.length > 0 ? `; init found ${listed.join(', ')}` : '; init found none'),
  };
}

/**
 * The sensor named by --sensor; else the first probe, else the first kernel sensor (said so
 * when there are several to pick from). `error`: a --sensor path that is not here (exit 2).
 */
export function flagSensor(
  scan: HardwareScan,
  flag: string | undefined,
  notes: string[],
): PlannedSensor | { error: string } {
  if (flag !== undefined) return sensorOfFlag(scan, flag);
  const probes = scan.sensors;
  const first = probes[0];
  if (first !== undefined) {
    if (scan.kernelSensors.length > 0) {
      notes.push(
        `using ${first.address}, the first of ${probes.length} probe(s) and ${scan.kernelSensors.length} ` +
          'kernel sensor(s) (--sensor ADDRESS or PATH picks another)',
      );
    } else if (probes.length > 1) {
      notes.push(
        `using ${first.address}, the first of ${probes.length} probes (--sensor ADDRESS picks another)`,
      );
    }
    return { address: first.address, pinned: probes.length > 1 };
  }
  const channel = scan.kernelSensors[0];
  if (channel === undefined) return { pinned: false };
  if (scan.kernelSensors.length > 1) {
    notes.push(
      `using ${describeKernelSensor(channel)}, the first of ${scan.kernelSensors.length} kernel sensors ` +
        '(--sensor PATH picks another)',
    );
  }
  return { kind: 'file_value', channel };
}

/**
 * Asks which sensor, by its number in the listing, a DS18B20 address or a kernel sensor's
 * path; the --sensor flag is the default. Nothing found: the flag, or the only probe on the bus.
 */
export async function askSensor(
  scan: HardwareScan,
  flag: string | undefined,
  loop: string,
  ask: Ask,
  write: (line: string) => void,
): Promise<PlannedSensor> {
  const choices: PlannedSensor[] = [
    ...scan.sensors.map((probe) => ({ address: probe.address, pinned: true })),
    ...scan.kernelSensors.map((channel) => ({ kind: 'file_value' as const, channel })),
  ];
  if (choices.length === 0) return flag === undefined ? { pinned: false } : { address: flag, pinned: true };
  const flagIndex = flag === undefined ? -1 : choices.findIndex((choice) => keyOf(choice) === flag);
  const fallback = flag === undefined ? '1' : flagIndex >= 0 ? String(flagIndex + 1) : flag;
  const withKernel = scan.kernelSensors.length > 0;
  const question = withKernel
    ? `Which sensor does loop ${loop} read? 1..${choices.length}, a DS18B20 address or a path`
    : `Which probe does loop ${loop} read? 1..${choices.length} or an address`;
  const picked = await askUntil(ask, write, question, fallback, (answer) => {
    const index = Number(answer);
    if (Number.isInteger(index) && index >= 1 && index <= choices.length) {
      return { value: choices[index - 1]! };
    }
    const parsed = parseSensorFlag(answer);
    if ('value' in parsed && parsed.value !== 'sim') {
      const sensor = sensorOfFlag(scan, parsed.value);
      if (!('error' in sensor)) return { value: sensor };
      return sensor;
    }
    const or = withKernel ? ', an address 28-… or a path init listed' : ', or an address 28-…';
    return { error: `"${answer}": answer a number from 1 to ${choices.length}${or}` };
  });
  // A probe is written by address when there is a choice (several sensors) or it was named.
  if (picked.kind === 'file_value') return picked;
  return { address: picked.address, pinned: scan.sensors.length > 1 || flag !== undefined };
}

/** What --sensor names a choice by: its address or its path. */
function keyOf(choice: PlannedSensor): string | undefined {
  return choice.kind === 'file_value' ? choice.channel.configPath : choice.address;
}
