import type { HistoryPoint } from '../operations/schemas.js';
import type { Sample } from '../store/samples-codec.js';
import { isoTime } from './views.js';

/**
 * A loop's history reduced to at most `maxPoints` for a chart, fed one sample at a time (a week
 * of readings is 60,000 samples: never held as an array). Unchanged when the samples in range
 * fit, else one point per equal slice of [fromMs, toMs] (a sample at toMs in the last slice):
 * measured and output averaged over the slice, the setpoint and the action its last (a setpoint
 * is a step: an average would draw a ramp that never happened), at the slice's mean sample time.
 *
 * Samples may come in any order (the database gives its rows in insertion order; a clock set
 * back interleaves them): sums do not care, and a slice's last is the sample with the latest
 * time (at equal times, the one pushed last). Samples outside [fromMs, toMs] are ignored. Pure.
 */
export class HistoryBuckets {
  private readonly sliceMs: number;
  private readonly count: Uint32Array;
  private readonly atSum: Float64Array;
  private readonly outputSum: Float64Array;
  private readonly measuredSum: Float64Array;
  private readonly measuredCount: Uint32Array;
  private readonly lastAtMs: Float64Array;
  private readonly lastSetpoint: Float64Array;
  private readonly lastAction: string[];
  /** The samples as pushed while they fit in maxPoints; dropped beyond. */
  private raw: Sample[] | undefined = [];
  private total = 0;

  constructor(
    private readonly range: { fromMs: number; toMs: number },
    private readonly maxPoints: number,
  ) {
    if (!Number.isInteger(maxPoints) || maxPoints < 1) throw new RangeError(`maxPoints ${maxPoints}`);
    this.sliceMs = Math.max(1, (range.toMs - range.fromMs) / maxPoints);
    this.count = new Uint32Array(maxPoints);
    this.atSum = new Float64Array(maxPoints);
    this.outputSum = new Float64Array(maxPoints);
    this.measuredSum = new Float64Array(maxPoints);
    this.measuredCount = new Uint32Array(maxPoints);
    this.lastAtMs = new Float64Array(maxPoints).fill(Number.NEGATIVE_INFINITY);
    this.lastSetpoint = new Float64Array(maxPoints);
    this.lastAction = new Array<string>(maxPoints);
  }

  /** Samples in range pushed so far. */
  get samples(): number {
    return this.total;
  }

  push(sample: Sample): void {
    const { atMs } = sample;
    if (!(atMs >= this.range.fromMs && atMs <= this.range.toMs)) return;
    this.total++;
    if (this.raw) {
      if (this.raw.length < this.maxPoints) this.raw.push(sample);
      else this.raw = undefined;
    }
    // A sample at toMs itself belongs to the last slice, not to one more.
    const i = Math.min(this.maxPoints - 1, Math.floor((atMs - this.range.fromMs) / this.sliceMs));
    this.count[i]!++;
    this.atSum[i]! += atMs;
    this.outputSum[i]! += sample.output;
    if (sample.measured !== undefined) {
      this.measuredSum[i]! += sample.measured;
      this.measuredCount[i]!++;
    }
    if (atMs >= this.lastAtMs[i]!) {
      this.lastAtMs[i] = atMs;
      this.lastSetpoint[i] = sample.setpoint;
      this.lastAction[i] = sample.action;
    }
  }

  /** The chart's points, oldest first, and whether they are slice averages. */
  points(): { points: HistoryPoint[]; downsampled: boolean } {
    if (this.raw) {
      // Stable: at equal times, in the order pushed.
      const sorted = [...this.raw].sort((a, b) => a.atMs - b.atMs);
      return { points: sorted.map(toPoint), downsampled: false };
    }
    const points: HistoryPoint[] = [];
    for (let i = 0; i < this.maxPoints; i++) {
      const count = this.count[i]!;
      if (count === 0) continue;
      const measuredCount = this.measuredCount[i]!;
      points.push({
        at: isoTime(Math.round(this.atSum[i]! / count)),
        measured: measuredCount === 0 ? null : round(this.measuredSum[i]! / measuredCount, 4),
        setpoint: this.lastSetpoint[i]!,
        output: round(this.outputSum[i]! / count, 4),
        action: this.lastAction[i]!,
      });
    }
    return { points, downsampled: true };
  }
}

/** `samples` through a HistoryBuckets (for callers that hold them already). Pure. */
export function downsampleHistory(
  samples: Iterable<Sample>,
  range: { fromMs: number; toMs: number },
  maxPoints: number,
): { points: HistoryPoint[]; downsampled: boolean } {
  const buckets = new HistoryBuckets(range, maxPoints);
  for (const sample of samples) buckets.push(sample);
  return buckets.points();
}

function toPoint(sample: Sample): HistoryPoint {
  return {
    at: isoTime(sample.atMs),
    measured: sample.measured ?? null,
    setpoint: sample.setpoint,
    output: sample.output,
    action: sample.action,
  };
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
