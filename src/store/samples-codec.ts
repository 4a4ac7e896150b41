import { ByteWriter, formatReader, timeReader, timeWriter } from './byte-codec.js';

/** One history sample: what a loop saw and did when it used a reading. */
export interface Sample {
  atMs: number;
  setpoint: number;
  measured: number | undefined;
  output: number;
  action: string;
}

/**
 * Samples format 1, a byte string:
 *   format byte (1), then per sample:
 *   flags (1 byte: bits 0–3 action code, bit 4 measured present, bit 5 setpoint follows),
 *   time (zigzag varint, ms: the first sample's absolute, the second's step from the first, then
 *     each step's difference from the previous step — 0, one byte, for a steady period),
 *   [setpoint (zigzag varint of value × 10⁴), when it differs from the previous sample's],
 *   [measured (zigzag varint of the change of value × 10⁴ since the last measured), when present],
 *   output (zigzag varint of the change of value × 10³),
 *   [action text (varint length + UTF-8), when the action code is 15].
 * Setpoint and measured keep 4 decimals (DS18B20 steps of 1/16 °C are exact), output 3 (0.1 %).
 * A reading every 10 s costs ~5 bytes instead of ~55 for a row of columns.
 */
const SAMPLES_FORMAT_1 = 1;
const VALUE_SCALE = 10_000;
const OUTPUT_SCALE = 1_000;
const ACTIONS = ['off', 'idle', 'heating', 'cooling', 'drying', 'fan', 'humidifying'] as const;
const OTHER_ACTION = 15;
const MEASURED_PRESENT = 0x10;
const SETPOINT_FOLLOWS = 0x20;

export function encodeSamples(samples: readonly Sample[]): Buffer {
  const out = new ByteWriter();
  out.byte(SAMPLES_FORMAT_1);
  const writeTime = timeWriter(out);
  let setpoint: number | undefined;
  let measured = 0;
  let output = 0;
  for (const sample of samples) {
    const code = ACTIONS.indexOf(sample.action as (typeof ACTIONS)[number]);
    const scaledSetpoint = scaled(sample.setpoint, VALUE_SCALE);
    const scaledMeasured =
      sample.measured === undefined || !Number.isFinite(sample.measured)
        ? undefined
        : scaled(sample.measured, VALUE_SCALE);
    let flags = code < 0 ? OTHER_ACTION : code;
    if (scaledMeasured !== undefined) flags |= MEASURED_PRESENT;
    if (scaledSetpoint !== setpoint) flags |= SETPOINT_FOLLOWS;
    out.byte(flags);
    writeTime(sample.atMs);
    if (scaledSetpoint !== setpoint) out.signed(scaledSetpoint);
    setpoint = scaledSetpoint;
    if (scaledMeasured !== undefined) {
      out.signed(scaledMeasured - measured);
      measured = scaledMeasured;
    }
    const scaledOutput = scaled(sample.output, OUTPUT_SCALE);
    out.signed(scaledOutput - output);
    output = scaledOutput;
    if (code < 0) out.text(sample.action);
  }
  return out.bytes();
}

export function decodeSamples(data: Uint8Array): Sample[] {
  const input = formatReader(data, SAMPLES_FORMAT_1, 'samples row');
  const samples: Sample[] = [];
  const readTime = timeReader(input);
  let setpoint = 0;
  let measured = 0;
  let output = 0;
  while (!input.done) {
    const flags = input.byte();
    const atMs = readTime();
    if (flags & SETPOINT_FOLLOWS) setpoint = input.signed();
    let present = false;
    if (flags & MEASURED_PRESENT) {
      measured += input.signed();
      present = true;
    }
    output += input.signed();
    const code = flags & 0x0f;
    const action = code === OTHER_ACTION ? input.text() : (ACTIONS[code] ?? 'idle');
    samples.push({
      atMs,
      setpoint: setpoint / VALUE_SCALE,
      measured: present ? measured / VALUE_SCALE : undefined,
      output: output / OUTPUT_SCALE,
      action,
    });
  }
  return samples;
}

function scaled(value: number, scale: number): number {
  const n = Math.round(value * scale);
  // Beyond ±2^50 the varint arithmetic (byte-codec.ts) would lose integers; no sensor reads that.
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 50)
    throw new RangeError(`sample value ${value} out of range`);
  return n;
}
