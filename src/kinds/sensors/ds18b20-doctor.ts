import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Ds18b20Sensor, listDs18b20 } from '../../drivers/ds18b20.js';
import { type CheckResult, type DoctorEnv, failedCheck } from '../types.js';

/** The fields of a ds18b20 section the check reads. */
interface ProbeSection {
  address?: string | undefined;
  plausible?: { min: number; max: number } | undefined;
  maxRatePerS?: number | undefined;
}

const W1_OVERLAY_FIX =
  'enable 1-Wire: add dtoverlay=w1-gpio to /boot/firmware/config.txt (data on GPIO4, 4.7 kΩ pull-up ' +
  'to 3.3 V) and reboot';

/**
 * The 1-Wire bus (`<sysfsRoot>/bus/w1/devices`) and one fresh reading of each configured DS18B20
 * (by address, or the only one present).
 */
export async function checkDs18b20(
  probes: { id: string; section: ProbeSection }[],
  env: DoctorEnv,
): Promise<CheckResult[]> {
  const devices = join(env.sysfsRoot, 'bus/w1/devices');
  const isDir = await stat(devices).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    return [{ name: '1-Wire bus', status: 'fail', detail: `${devices} is missing`, fix: W1_OVERLAY_FIX }];
  }
  const present = await listDs18b20(env.sysfsRoot).catch(() => []);
  const results: CheckResult[] = [
    {
      name: '1-Wire bus',
      status: 'ok',
      detail: `${present.length} DS18B20 present${present.length > 0 ? `: ${present.join(', ')}` : ''}`,
    },
  ];
  for (const { id, section } of probes) {
    const name = `DS18B20 sensors.${id}`;
    const address = section.address ?? (present.length === 1 ? present[0] : undefined);
    try {
      const sensor = new Ds18b20Sensor({
        id,
        address: section.address,
        sysfsRoot: env.sysfsRoot,
        nowMs: env.nowMs,
        plausible: section.plausible,
        maxRatePerS: section.maxRatePerS,
      });
      const tempC = await sensor.read();
      results.push({ name, status: 'ok', detail: `${tempC} °C (${address ?? 'the only one'})` });
    } catch (error) {
      results.push(failedCheck(name, error, ds18b20Fix(id, section, present)));
    }
  }
  return results;
}

function ds18b20Fix(id: string, section: ProbeSection, present: string[]): string {
  if (section.address === undefined && present.length > 1) {
    return `set sensors.${id}.address to one of ${present.join(', ')}`;
  }
  if (section.address !== undefined && !present.includes(section.address.toLowerCase())) {
    return present.length > 0
      ? `check the address (present: ${present.join(', ')}) and the probe's wiring`
      : 'check the wiring: data on GPIO4 with a 4.7 kΩ pull-up to 3.3 V, ground, 3.3 V';
  }
  return 'check the wiring: data on GPIO4 with a 4.7 kΩ pull-up to 3.3 V, ground, 3.3 V; long cables need stronger pull-ups';
}
