import type { Direction, Mode, Reading } from '../types.js';
import type { AutotuneResult } from './autotune-result.js';
import type { SensorNoise } from './noise.js';
import type { RelayExperiment } from './relay-experiment.js';

/**
 * The autotune's state as the loop's memory keeps it (plain JSON), one step's input and output,
 * and what every phase reads of it: the record (capped), the experiment it gives the analysis,
 * and which way the value moves at the level in force. The state machine is autotune.ts.
 */

export type AutotunePhase = 'noise' | 'relay' | 'done' | 'aborted';

/** Samples kept; when full, every second one is dropped and later readings kept every 2nd (4th…). */
export const MAX_SAMPLES = 1500;

/** The run's state, kept in the loop's memory (JSON: plain numbers, strings and arrays). */
export interface AutotuneMemory {
  phase: AutotunePhase;
  side: Direction;
  /** The desired state the run was started with: a change aborts it. */
  mode: Mode;
  setpoint: number;
  startedAtMs: number;
  maxDurationMs: number;
  closedLoopS?: number;
  minHysteresis: number;
  cyclesNeeded: number;
  /** Given by the options, else set when the relay starts (STEP_DEPTH_BANDS × hysteresis). */
  stepDepth?: number;
  /** The caps of the band and of the first step (absent in a memory from before: the defaults). */
  maxHysteresis?: number;
  maxStepDepth?: number;
  highLevel: number;
  lowLevel: number;
  /** The plant is assumed at rest with this level when the record starts. */
  initialLevel: number;
  /**
   * Whether it really is (a continuous actuator held steady, a plant that sat idle); false for a
   * relay that was regulating (its ripple): the fit then starts where the value turned (`turn`).
   */
  startsAtRest: boolean;
  /**
   * A continuous actuator that was regulating (startsAtRest false): `initialLevel` is the PID's
   * output at rest, and the plant may well be at rest with it (a loop that has settled). The fit
   * takes the record as starting at rest there unless the free start fits clearly worse
   * (identify-start.ts).
   */
  restCandidate?: boolean;
  /**
   * A relay that was regulating (startsAtRest false): what its plant did before the start is
   * unknown (the last dead time's input is its window's or band's on/off pattern), so the fit
   * starts where the input history is known — once the value has turned under the held low
   * level (see TURN_BANDS). `extreme`: the highest value since the start (lowest for the lower
   * side); `fitFromMs`: ms since startedAtMs of the first reading TURN_BANDS bands past it.
   */
  turn?: {
    extreme?: number;
    fitFromMs?: number;
    /**
     * Where the value has stayed within one band since `sinceMs` (ms since startedAtMs): held
     * low that long (FLAT_MS) without moving, the plant is at rest and the fit starts there.
     */
    flat?: { value: number; sinceMs: number };
  };
  /** The level the machine wants now (its relay state). */
  level: number;
  noise?: SensorNoise;
  hysteresis?: number;
  relayStartedAtMs?: number;
  /** [ms since startedAtMs, value], oldest first, at most MAX_SAMPLES. */
  samples: [number, number][];
  /** Keep one reading in `keepEvery` (doubles each time the record is thinned). */
  keepEvery: number;
  /** Readings seen since the last one kept. */
  skipped: number;
  lastReadingAtMs?: number;
  /** [ms since startedAtMs, level]: the levels really applied, oldest first. */
  switches: [number, number][];
  /** Setpoint-unreachable watch for the level in force: since when, best value, when. */
  approach?: { sinceMs: number; best: number; bestAtMs: number };
  /** Full cycles so far (the first included) and the last one's period, s. */
  cycles: number;
  lastPeriodS?: number;
  endedAtMs?: number;
  result?: AutotuneResult;
  abortReason?: string;
  /**
   * An abort asked for between cycles (a person's cancel, a clock step): the next step ends the
   * run with this reason, so it ends like every other abort, inside a cycle that holds the loop
   * safe (loop-autotune.ts).
   */
  pendingAbort?: string;
}

/** One step's inputs: the latest reading and the loop's desired state now. */
export interface AutotuneInput {
  /** The latest reading as the loop judged it: undefined (or `sensorProblem`) aborts. */
  reading: Reading | undefined;
  /** Why the reading cannot be used (missing, stale, implausible), if it cannot. */
  sensorProblem?: string;
  mode: Mode;
  setpoint: number;
  /** Anything else that holds the loop safe (a latched fault, an interlock): aborts. */
  interrupted?: string;
}

export interface AutotuneStep {
  memory: AutotuneMemory;
  /** Level for the tuned actuator (0..1) while the run is active; undefined once it ended. */
  level?: number;
}

export function isActive(memory: AutotuneMemory | undefined): memory is AutotuneMemory {
  return memory !== undefined && (memory.phase === 'noise' || memory.phase === 'relay');
}

/** The record as the analysis and identification read it. */
export function autotuneExperiment(memory: AutotuneMemory): RelayExperiment {
  const t0 = memory.startedAtMs;
  return {
    samples: memory.samples.map(([tMs, value]) => ({ tMs: t0 + tMs, value })),
    switches: memory.switches.map(([tMs, level]) => ({ tMs: t0 + tMs, level })),
    initialLevel: memory.initialLevel,
    highLevel: memory.highLevel,
    lowLevel: memory.lowLevel,
    setpoint: memory.setpoint,
    hysteresis: memory.hysteresis ?? 0,
  };
}

/** Adds a reading to the record, thinning it by 2 when full. */
export function record(memory: AutotuneMemory, reading: Reading): AutotuneMemory {
  const base = { ...memory, lastReadingAtMs: reading.atMs };
  if (memory.skipped + 1 < memory.keepEvery) return { ...base, skipped: memory.skipped + 1 };
  let samples = [...memory.samples, [reading.atMs - memory.startedAtMs, reading.value] as [number, number]];
  let keepEvery = memory.keepEvery;
  if (samples.length > MAX_SAMPLES) {
    samples = samples.filter((_, i) => i % 2 === 0);
    keepEvery *= 2;
  }
  return { ...base, samples, keepEvery, skipped: 0 };
}

/** The switches since the relay phase began (the noise phase's are the plant's input only). */
export function relayPhase(memory: AutotuneMemory): [number, number][] {
  if (memory.relayStartedAtMs === undefined) return [];
  const fromMs = memory.relayStartedAtMs - memory.startedAtMs;
  return memory.switches.filter(([tMs]) => tMs >= fromMs);
}

/** At the level in force the value goes up: a heater at high, a cooler at low. */
export function movesUp(memory: AutotuneMemory): boolean {
  return pushesUp(memory) === (memory.level === memory.highLevel);
}

/** The tuned actuator raises the value at its high level (a heater), or lowers it (a cooler). */
export function pushesUp(memory: AutotuneMemory): boolean {
  return memory.side === 'raise';
}
