import { ByteWriter, formatReader, timeReader, timeWriter } from './byte-codec.js';

/** One value of a recorded sensor (loops.<id>.record): `value` null where there was none (a gap). */
export interface RecordedPoint {
  atMs: number;
  value: number | null;
}

/**
 * Recorded points format 1, a byte string, like the samples' (samples-codec.ts):
 *   format byte (1), then per point:
 *   flags (1 byte: bit 0 value present),
 *   time (zigzag varint, ms: the first point's absolute, then each step's difference from the
 *     previous step — one byte for a steady period),
 *   [value (zigzag varint of the change of value × 10⁴ since the last present one), when present].
 * Four decimals: a gravity of 1.0504 SG and a DS18B20's 1/16 °C are exact. A value that is not a
 * number, or too large for the varints (beyond ±2^50 once scaled), is stored as a gap: a flush
 * must never fail on what a sensor said.
 */
const RECORDED_FORMAT_1 = 1;
const VALUE_SCALE = 10_000;
const VALUE_PRESENT = 0x01;

export function encodeRecorded(points: readonly RecordedPoint[]): Buffer {
  const out = new ByteWriter();
  out.byte(RECORDED_FORMAT_1);
  const writeTime = timeWriter(out);
  let value = 0;
  for (const point of points) {
    const scaled = scaledOrGap(point.value);
    out.byte(scaled === undefined ? 0 : VALUE_PRESENT);
    writeTime(point.atMs);
    if (scaled !== undefined) {
      out.signed(scaled - value);
      value = scaled;
    }
  }
  return out.bytes();
}

export function decodeRecorded(data: Uint8Array): RecordedPoint[] {
  const input = formatReader(data, RECORDED_FORMAT_1, 'recorded row');
  const points: RecordedPoint[] = [];
  const readTime = timeReader(input);
  let value = 0;
  while (!input.done) {
    const flags = input.byte();
    const atMs = readTime();
    if (flags & VALUE_PRESENT) {
      value += input.signed();
      points.push({ atMs, value: value / VALUE_SCALE });
    } else points.push({ atMs, value: null });
  }
  return points;
}

function scaledOrGap(value: number | null): number | undefined {
  if (value === null || !Number.isFinite(value)) return undefined;
  const n = Math.round(value * VALUE_SCALE);
  return Number.isSafeInteger(n) && Math.abs(n) <= 2 ** 50 ? n : undefined;
}
