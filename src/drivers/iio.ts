/**
 * IIO channel files as the kernel ABI defines them (Documentation/ABI/testing/sysfs-bus-iio):
 * `<dir>_<type>[<index>][_<modifier>]_<info>`, e.g. `in_temp_input`, `in_humidityrelative_raw`,
 * `in_voltage0_raw`, `in_temp_ambient_raw`. A `_raw` value is unprocessed: the ABI's value in
 * the channel's unit is (raw + offset) × scale, from the sibling `_offset` and `_scale` files,
 * which are either the channel's own (`in_voltage0_scale`) or shared by every channel of the
 * type (`in_voltage_scale`). No `_scale` file means scale 1, no `_offset` means 0. An `_input`
 * file is already processed. Units: temp in milli °C, humidityrelative in milli percent,
 * pressure in kPa, voltage in mV.
 */
import { basename, dirname, join } from 'node:path';

/** An IIO channel's raw file name: `in_` or `out_`, the channel, `_raw`. */
const RAW_FILE = /^((?:in|out)_([a-z]+)[^/]*)_raw$/;

/** Whether `path` is an IIO channel's `_raw` file (read with its `_scale` and `_offset`). */
export function isIioRawFile(path: string): boolean {
  return RAW_FILE.test(basename(path));
}

/** The files that may hold a raw file's `info` (`scale`, `offset`), the channel's own first. */
export function iioSiblings(rawPath: string, info: 'scale' | 'offset'): string[] {
  const match = RAW_FILE.exec(basename(rawPath));
  if (!match) return [];
  const [, channel, type] = match;
  const direction = channel!.startsWith('in_') ? 'in' : 'out';
  const shared = `${direction}_${type}`;
  const names = channel === shared ? [channel] : [channel!, shared];
  return names.map((name) => join(dirname(rawPath), `${name}_${info}`));
}

/** (raw + offset) × scale, the ABI's formula, in the channel's unit. */
export function iioProcessed(raw: number, scale: number, offset: number): number {
  return (raw + offset) * scale;
}
