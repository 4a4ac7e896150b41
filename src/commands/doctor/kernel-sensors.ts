/**
 * Doctor: the sensors the kernel's own drivers offer (IIO and hwmon under gpio.sysfsRoot: a
 * BME280, an SHT3x, a DHT22, a thermocouple amplifier, the CPU), each with a fresh reading and
 * the line that makes it a file_value sensor, whether or not the config uses them yet.
 */
import type { Config } from '../../config/schema.js';
import {
  describeReading,
  type KernelChannel,
  listKernelSensors,
  uniqueSensorIds,
} from '../../drivers/kernel-sensors.js';
import { actuatorKindOf, sensorKindOf } from '../../kinds/registry.js';
import type { CheckResult } from '../../kinds/types.js';

/** `bme280_temp: { kind: file_value, path: …, scale: 0.001 }`: one line to paste under `sensors:`. */
export function flowSensorLine(channel: KernelChannel, id: string): string {
  return `${id}: { kind: file_value, path: ${channel.configPath}, scale: ${channel.scale} }`;
}

/** One line per channel: the device, the reading, then the config line. */
export function formatKernelChannels(channels: KernelChannel[]): string[] {
  const ids = uniqueSensorIds(channels);
  return channels.flatMap((channel, i) => [
    `${channel.driver} (${channel.place}) ${channel.quantity}: ${describeReading(channel)}`,
    `  sensors: ${flowSensorLine(channel, ids[i]!)}`,
  ]);
}

/** Whether every sensor and actuator is simulated: a config that runs anywhere needs no sysfs. */
function allSimulated(config: Pick<Config, 'sensors' | 'actuators'>): boolean {
  return (
    Object.values(config.sensors).every((s) => sensorKindOf(s.kind).simulated) &&
    Object.values(config.actuators).every((a) => actuatorKindOf(a.kind).simulated)
  );
}

/**
 * Never fails: no kernel sensor is a skip (most configs need none), a failed read is listed.
 * Skipped for a config that is all simulation, which reads nothing of the machine.
 */
export async function checkKernelSensors(
  config: Pick<Config, 'gpio' | 'sensors' | 'actuators'>,
): Promise<CheckResult> {
  const name = 'kernel sensors (IIO, hwmon)';
  if (allSimulated(config)) return { name, status: 'skip', detail: 'a simulated config: not looked for' };
  const root = config.gpio.sysfsRoot;
  const channels = await listKernelSensors(root);
  if (channels.length === 0) {
    return {
      name,
      status: 'skip',
      detail: `none under ${root}/bus/iio/devices or ${root}/class/hwmon (docs/kernel-sensors.md says how to enable a BME280, SHT3x, DHT22…)`,
    };
  }
  return {
    name,
    status: 'ok',
    detail: [`${channels.length} channel(s):`, ...formatKernelChannels(channels)].join('\n'),
  };
}
