/**
 * Bytes with LEB128 varints, for the packed samples and recorded rows. Arithmetic, not bit
 * operators: values go beyond 2^31.
 */

/** Growable byte buffer with LEB128 varints; arithmetic, not bit operators (values beyond 2^31). */
export class ByteWriter {
  private buffer = Buffer.alloc(64);
  private length = 0;

  byte(value: number): void {
    if (this.length === this.buffer.length) {
      const bigger = Buffer.alloc(this.buffer.length * 2);
      this.buffer.copy(bigger);
      this.buffer = bigger;
    }
    this.buffer[this.length++] = value;
  }

  unsigned(value: number): void {
    while (value >= 0x80) {
      this.byte((value % 0x80) + 0x80);
      value = Math.floor(value / 0x80);
    }
    this.byte(value);
  }

  /** Zigzag: 0, −1, 1, −2… → 0, 1, 2, 3…, so small magnitudes of either sign stay short. */
  signed(value: number): void {
    this.unsigned(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  text(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.unsigned(bytes.length);
    for (const b of bytes) this.byte(b);
  }

  bytes(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }
}

/** Reads what ByteWriter wrote; a read past the end throws 'samples row truncated'. */
export class ByteReader {
  private offset = 0;

  constructor(private readonly data: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.data.length;
  }

  byte(): number {
    const value = this.data[this.offset++];
    if (value === undefined) throw new Error('samples row truncated');
    return value;
  }

  unsigned(): number {
    let value = 0;
    let factor = 1;
    for (;;) {
      const b = this.byte();
      value += (b % 0x80) * factor;
      if (b < 0x80) return value;
      factor *= 0x80;
    }
  }

  signed(): number {
    const z = this.unsigned();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  text(): string {
    const length = this.unsigned();
    const start = this.offset;
    this.offset += length;
    if (this.offset > this.data.length) throw new Error('samples row truncated');
    return Buffer.from(this.data.subarray(start, this.offset)).toString('utf8');
  }
}

/**
 * Writes times as the samples and recorded rows hold them (zigzag varints, ms): the first
 * absolute, then each step's difference from the previous step (0, one byte, for a steady period).
 */
export function timeWriter(out: ByteWriter): (atMs: number) => void {
  let previousAtMs: number | undefined;
  let previousStepMs = 0;
  return (atMs) => {
    if (previousAtMs === undefined) out.signed(atMs);
    else {
      const stepMs = atMs - previousAtMs;
      out.signed(stepMs - previousStepMs);
      previousStepMs = stepMs;
    }
    previousAtMs = atMs;
  };
}

/** Reads the times timeWriter wrote, one a call. */
export function timeReader(input: ByteReader): () => number {
  let atMs: number | undefined;
  let stepMs = 0;
  return () => {
    if (atMs === undefined) atMs = input.signed();
    else {
      stepMs += input.signed();
      atMs += stepMs;
    }
    return atMs;
  };
}

/** A reader past the row's format byte, which must be `format` (`what`: the row, for the error). */
export function formatReader(data: Uint8Array, format: number, what: string): ByteReader {
  const input = new ByteReader(data);
  const found = input.byte();
  if (found !== format) throw new Error(`${what} in unknown format ${found}`);
  return input;
}
