/**
 * What a relay-feedback experiment records (Åström–Hägglund): the measured value, and when the
 * relay switched to which level. Pure data; the analysis and the identification read it.
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
