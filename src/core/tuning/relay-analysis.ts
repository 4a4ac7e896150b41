import type { RelayExperiment, Sample } from './relay-experiment.js';

/**
 * Finds the steady oscillation of a relay experiment: the last full cycles, their periods and
 * peak-to-peak amplitudes, and whether they agree.
 *
 * A cycle runs from one switch to the high level to the next. Periods come from switch times,
 * which the hysteresis band already makes noise-robust (the relay switched once per crossing);
 * amplitudes from a centred moving average, so one noisy sample cannot make a peak. The first
 * cycle always holds the open-loop step from rest, so it is never counted.
 *
 * Agreement compares means, not single cycles: with sensor noise each cycle really differs
 * (noise moves a switch by σ / slope, on a slow plant tens of seconds, and the peak with it;
 * measured on FopdtPlant with σ 0.05: ±5 % per cycle, steady or not). So the oscillation is
 * steady when the mean period and mean amplitude of the last `cycles` cycles agree with those of
 * the `cycles` before within `tolerance`: a start-up transient or a drifting load still shows,
 * the cycle-to-cycle scatter averages out.
 */

export interface RelayCycle {
  startMs: number;
  endMs: number;
  periodS: number;
  /** Time at the high level within the cycle, seconds (the rest is at the low level). */
  highS: number;
  /** Extremes of the smoothed value within the cycle. */
  max: number;
  min: number;
  peakToPeak: number;
}

export type OscillationState = 'too-few-cycles' | 'not-steady' | 'steady';

export interface OscillationAnalysis {
  state: OscillationState;
  /** The last `cycles` full cycles (fewer when there are not enough yet), oldest first. */
  cycles: RelayCycle[];
  /** Means over `cycles`; NaN when there is none. */
  periodS: number;
  peakToPeak: number;
  /**
   * |mean of the last `cycles` − mean of the `cycles` before| / mean: what `tolerance` is
   * compared with. NaN with fewer than 2 × `cycles` cycles.
   */
  periodDrift: number;
  amplitudeDrift: number;
  /** (max − min) / mean of single cycles within `cycles`: the scatter, for the status. */
  periodSpread: number;
  amplitudeSpread: number;
  /**
   * Describing-function ultimate gain with the hysteresis correction (Åström–Hägglund):
   * Ku = 4d / (π·√(a² − ε²)), d half the relay step, a half the peak-to-peak, ε the hysteresis.
   * For the peers' relay-plus-Ziegler–Nichols comparison; homeostat tunes from the model.
   */
  ultimateGain: number;
}

export interface OscillationOptions {
  /** Full cycles averaged, and compared with as many before them. Default 3. */
  cycles?: number;
  /**
   * Largest relative drift of the mean period and amplitude that still counts as steady. Default
   * 0.1: with σ 0.05 noise, 3-cycle means of a truly steady relay oscillation differ by up to
   * 6.7 % on the slow plants (FopdtPlant, 5 seeds), so 0.05 would wait for ever on some runs.
   */
  tolerance?: number;
  /** Width of the moving average, samples. Default 5. */
  smoothingSamples?: number;
}

export function analyseRelayOscillation(
  experiment: RelayExperiment,
  options: OscillationOptions = {},
): OscillationAnalysis {
  const wanted = options.cycles ?? 3;
  const tolerance = options.tolerance ?? 0.1;
  const smoothed = movingAverage(experiment.samples, options.smoothingSamples ?? 5);
  const all = relayCycles(experiment, smoothed).slice(1);
  const cycles = all.slice(-wanted);
  const before = all.length >= 2 * wanted ? all.slice(-2 * wanted, -wanted) : [];
  const periodS = mean(cycles.map((c) => c.periodS));
  const peakToPeak = mean(cycles.map((c) => c.peakToPeak));
  const periodDrift = drift(
    before.map((c) => c.periodS),
    periodS,
  );
  const amplitudeDrift = drift(
    before.map((c) => c.peakToPeak),
    peakToPeak,
  );
  const periodSpread = spread(cycles.map((c) => c.periodS));
  const amplitudeSpread = spread(cycles.map((c) => c.peakToPeak));
  const state: OscillationState =
    before.length < wanted
      ? 'too-few-cycles'
      : periodDrift <= tolerance && amplitudeDrift <= tolerance
        ? 'steady'
        : 'not-steady';
  const halfStep = Math.abs(experiment.highLevel - experiment.lowLevel) / 2;
  const a = peakToPeak / 2;
  const ultimateGain =
    (4 * halfStep) / (Math.PI * Math.sqrt(Math.max(a * a - experiment.hysteresis ** 2, 1e-12)));
  return {
    state,
    cycles,
    periodS,
    peakToPeak,
    periodDrift,
    amplitudeDrift,
    periodSpread,
    amplitudeSpread,
    ultimateGain,
  };
}

/** Every full cycle (switch to high … next switch to high), oldest first. */
export function relayCycles(experiment: RelayExperiment, smoothed: readonly Sample[]): RelayCycle[] {
  const { switches, highLevel } = experiment;
  const cycles: RelayCycle[] = [];
  let startIndex = -1;
  let lowAtMs: number | undefined;
  for (let i = 0; i < switches.length; i++) {
    const sw = switches[i]!;
    if (sw.level !== highLevel) {
      if (startIndex >= 0 && lowAtMs === undefined) lowAtMs = sw.tMs;
      continue;
    }
    if (startIndex >= 0 && lowAtMs !== undefined) {
      const startMs = switches[startIndex]!.tMs;
      cycles.push(cycle(startMs, lowAtMs, sw.tMs, smoothed));
    }
    startIndex = i;
    lowAtMs = undefined;
  }
  return cycles;
}

function cycle(startMs: number, lowAtMs: number, endMs: number, smoothed: readonly Sample[]): RelayCycle {
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (const s of smoothed) {
    if (s.tMs < startMs || s.tMs >= endMs) continue;
    max = Math.max(max, s.value);
    min = Math.min(min, s.value);
  }
  return {
    startMs,
    endMs,
    periodS: (endMs - startMs) / 1000,
    highS: (lowAtMs - startMs) / 1000,
    max,
    min,
    peakToPeak: max - min,
  };
}

/** Centred moving average over `width` samples (shorter at the ends). */
export function movingAverage(samples: readonly Sample[], width: number): Sample[] {
  const half = Math.max(0, Math.floor(width / 2));
  return samples.map((s, i) => {
    const from = Math.max(0, i - half);
    const to = Math.min(samples.length, i + half + 1);
    let sum = 0;
    for (let j = from; j < to; j++) sum += samples[j]!.value;
    return { tMs: s.tMs, value: sum / (to - from) };
  });
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function drift(before: readonly number[], latestMean: number): number {
  if (before.length === 0) return Number.NaN;
  return Math.abs(latestMean - mean(before)) / Math.abs(latestMean);
}

function spread(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return (Math.max(...values) - Math.min(...values)) / Math.abs(mean(values));
}
