/**
 * What a starter config says, decided before any text is written: the plan `starter.ts`
 * renders. The parsers here turn flags and answers into it, each returning a value or a
 * message a person can act on; the values a room heater needs (limits, cut-off) live here too.
 */
import { LOOP_ID_PATTERN, NODE_ID_PATTERN } from '../config/schema/common.js';
import type { KernelChannel } from '../drivers/kernel-sensors.js';

/** Setpoints a room may be given (loop limits), °C: frost protection up to warm. */
export const ROOM_LIMITS_C = { min: 5, max: 25 } as const;

/** The heater is never on at or above this, °C (the loop's cut-off; above ROOM_LIMITS_C.max). */
export const ROOM_CUTOFF_MAX_C = 30;

export const DEFAULT_SETPOINT_C = 20;
export const DEFAULT_LOOP = 'room';

/** The DS18B20 of a hardware starter. */
export interface PlannedProbe {
  kind?: 'ds18b20';
  /** The probe init chose; absent when none was found (the driver then takes the only one). */
  address?: string;
  /**
   * Written as `address:` (several probes, or named by the user); otherwise only as a comment,
   * so the only probe on the bus is used whatever its address and a replaced one needs no edit.
   */
  pinned: boolean;
}

/**
 * A temperature channel of the kernel's own drivers (IIO or hwmon: a BME280, an SHT3x, a
 * thermocouple amplifier), written as a `file_value` sensor on its stable path pattern.
 */
export interface PlannedKernelSensor {
  kind: 'file_value';
  /** The channel found (drivers/kernel-sensors.ts): its path pattern, scale and reading. */
  channel: KernelChannel;
}

/** The sensor of a hardware starter's loop. */
export type PlannedSensor = PlannedProbe | PlannedKernelSensor;

interface PlanCommon {
  /** node.id: from the host name. */
  nodeId: string;
  /** The loop's id (`--loop`), also the prefix of the sensor and actuator ids. */
  loop: string;
  setpointC: number;
}

/** One DS18B20 and one relay on a GPIO pin. */
export interface HardwarePlan extends PlanCommon {
  kind: 'hardware';
  sensor: PlannedSensor;
  relayBcm: number;
  /** Written as gpio.sysfsRoot when init scanned another root than /sys (tests, images). */
  sysfsRoot?: string;
}

/** A simulated room: runs anywhere with `homeostat run`. */
export interface SimPlan extends PlanCommon {
  kind: 'sim';
  /**
   * Written as storage.path when the file is the service's config (/etc/homeostat): the
   * service and the command line then share its database. A file elsewhere (`init ~/room.yaml
   * --sensor sim`, run by its user) keeps the default, which that user can write.
   */
  storagePath?: string;
}

/** The service's database, as install-service lays it out. */
export const SERVICE_DB_PATH = '/var/lib/homeostat/homeostat.db';

/** Whether `outPath` is the service's config directory (/etc/homeostat, or systemd's). */
export function isServiceConfigPath(outPath: string, configurationDirectory?: string): boolean {
  const dirs = ['/etc/homeostat', ...(configurationDirectory ? [configurationDirectory] : [])];
  return dirs.some((dir) => outPath.startsWith(`${dir.replace(/\/+$/, '')}/`));
}

export type StarterPlan = HardwarePlan | SimPlan;

type Parsed<T> = { value: T } | { error: string };

/** `--loop`: a loop id (it ends up in MQTT topics and Home Assistant entity ids). */
export function parseLoop(text: string): Parsed<string> {
  return LOOP_ID_PATTERN.test(text)
    ? { value: text }
    : { error: `loop name "${text}": use lowercase letters, digits and _ (e.g. room, living_room)` };
}

/** `--setpoint` or an answer: °C within {@link ROOM_LIMITS_C}. */
export function parseSetpoint(text: string): Parsed<number> {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value)) {
    return { error: `setpoint "${text}" is not a number (°C, e.g. 20 or 20.5)` };
  }
  const { min, max } = ROOM_LIMITS_C;
  if (value < min || value > max) {
    return {
      error:
        `setpoint ${value} °C is outside ${min}..${max} °C, the limits this starter sets for a room ` +
        '(edit limits and cutoff in the file afterwards for another use)',
    };
  }
  return { value };
}

/**
 * `--sensor`: `sim`, a DS18B20 address (`28-` and 12 hex digits), or a kernel sensor's path as
 * init lists it (a path under /sys with its iio:device* or hwmon* part, kept as typed).
 */
export function parseSensorFlag(text: string): Parsed<'sim' | string> {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase();
  if (lower === 'sim') return { value: 'sim' };
  if (/^28-[0-9a-f]{12}$/.test(lower)) return { value: lower };
  if (trimmed.startsWith('/sys/')) return { value: trimmed };
  return {
    error:
      `--sensor "${text}": give a DS18B20 address as listed in /sys/bus/w1/devices (e.g. 28-0316a2795bff) or sim, ` +
      "or a kernel sensor's path as init lists it",
  };
}

/**
 * node.id from the host name: its first label, lowercased, other characters as `-`;
 * `homeostat` when nothing is left.
 */
export function nodeIdFromHostname(hostname: string): string {
  const id = (hostname.split('.')[0] ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return id !== '' && NODE_ID_PATTERN.test(id) ? id : 'homeostat';
}
