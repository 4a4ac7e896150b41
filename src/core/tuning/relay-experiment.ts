/**
 * What a relay-feedback experiment records (Åström–Hägglund): the measured value, and when the
 * relay switched to which level, and the walk through it that the model fits share.
 */

/** One reading of the measured value. */
export interface Sample {
  tMs: number;
  value: number;
}

/** The relay output changed to `level` (0..1) at `tMs`. */
export interface RelaySwitch {
  tMs: number;
  level: number;
}

/** A recorded relay experiment. Samples and switches are sorted by time. */
export interface RelayExperiment {
  samples: readonly Sample[];
  switches: readonly RelaySwitch[];
  /** Output level before the first switch (the plant is assumed at rest with it, see identify). */
  initialLevel: number;
  /** The relay's two levels, e.g. 1 and 0 for a heater; a continuous actuator uses any two. */
  highLevel: number;
  lowLevel: number;
  setpoint: number;
  /** Half the band: the relay switches at setpoint ± hysteresis. */
  hysteresis: number;
}

/**
 * Walks a model through the experiment with the relay output delayed by `delayMs`: before each
 * sample, `advance(toMs, level)` to each delayed switch it comes after and then to the sample,
 * `level` being the output in force until then; then `atSample(i)`. The fits keep their lags'
 * state in `advance`, so one walk serves every model order.
 */
export function replayDelayed(
  experiment: RelayExperiment,
  delayMs: number,
  advance: (toMs: number, level: number) => void,
  atSample: (i: number) => void,
): void {
  const { samples, switches } = experiment;
  let level = experiment.initialLevel;
  let next = 0;
  for (let i = 0; i < samples.length; i++) {
    const tMs = samples[i]!.tMs;
    for (; next < switches.length && switches[next]!.tMs + delayMs <= tMs; next++) {
      advance(switches[next]!.tMs + delayMs, level);
      level = switches[next]!.level;
    }
    advance(tMs, level);
    atSample(i);
  }
}
