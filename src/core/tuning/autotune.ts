import type { Direction, Mode, Reading } from '../types.js';
import { type AutotuneResult, resultOfRun } from './autotune-result.js';
import { estimateNoise, type SensorNoise } from './noise.js';
import { analyseRelayOscillation, type OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';

/**
 * Relay autotune (Åström–Hägglund) as a pure state machine: start → noise → relay → done, or
 * aborted with a reason a person can read. Each step takes the latest reading and the loop's
 * desired state with `nowMs`, and returns the level for the tuned actuator; everything it
 * remembers is plain JSON (the loop's memory is persisted), with the record capped.
 *
 * noise  The output is held (a relay at its low level, a continuous actuator where it is) for
 *        NOISE_READINGS readings; σ and the quantum of the detrended readings size the band:
 *        h = max(3σ, 1 quantum, minHysteresis). A reading jumps across a band of 2h by noise
 *        alone only when two readings differ by 6σ = 4.2σ of a difference: p ≈ 1e-5 a reading,
 *        so the relay switches on the plant, not on noise. The quantum: a DS18B20 that reads
 *        the same value 12 times has σ 0, and a band under one step would switch on its LSB.
 * relay  Output at `high` below setpoint − h, at `low` above setpoint + h (the other way round
 *        for the lower side). A cycle runs from one switch to high to the next.
 *        The first switch to high waits until the value is `stepDepth` below the setpoint
 *        (STEP_DEPTH_BANDS): that first step carries the static gain (see there).
 * done   Once 2 full cycles after the first (the open-loop step, never counted) agree in period
 *        and amplitude within STEADY_TOLERANCE, the whole record, the held start included, is
 *        fitted (identify-half-rule.ts: a second-order fit reduced by Skogestad's half rule),
 *        which gives SIMC gains and a relay modulation (modulation.ts).
 *
 * Why 2 cycles and not 3 + 3 (relay-analysis.ts' default): a FOPDT plant under a relay is on
 * its limit cycle from the second cycle on (its state is the value and the dead time's
 * content, both the same at each switch), and the fit uses every sample, not the cycles'
 * means. Measured on the five benchmark plants (σ 0.05, quantum 0.0625, a reading every
 * 5 s, seeds 1–5, test/core/tuning/autotune.test.ts): K, τ, θ within 7 % of the true (half
 * rule) values, in 0.6–2.9 (τ + θ) on the four lag-dominated plants and 5.6 on the kettle,
 * whose relay period is longest against τ + θ (it needed 12.3 with 3 + 3 cycles).
 * The agreement check still catches a plant that has not settled (a load changing).
 *
 * The duration is counted from the start (the held noise phase included). The normal start is
 * a loop regulating near its setpoint; from far below (ambient) the approach is part of the run
 * and of the record (a larger step, a better gain estimate), and may take longer.
 */

export type { AutotuneResult } from './autotune-result.js';

export type AutotunePhase = 'noise' | 'relay' | 'done' | 'aborted';

export interface AutotuneOptions {
  /**
   * Which side to tune. Default from the mode: raise for heat/humidify, lower for
   * cool/dehumidify; heat_cool and auto have two sides and need it given.
   */
  side?: Direction;
  /** SIMC closed-loop time constant τc, s. Default the identified dead time. */
  closedLoopS?: number;
  /** Time limit, ms. Default DEFAULT_MAX_DURATION_MS. */
  maxDurationMs?: number;
  /** A continuous actuator's two relay levels, 0..1. Default 1 and 0 (relays are always 1/0). */
  highLevel?: number;
  lowLevel?: number;
  /** Smallest relay hysteresis, loop unit. Default 0.05. */
  minHysteresis?: number;
  /** Full cycles after the first that must agree before the run ends. Default CYCLES_NEEDED. */
  cycles?: number;
  /**
   * How far below the setpoint (above it for the lower side) the output is held low before the
   * first switch to high, loop unit. Default STEP_DEPTH_BANDS × the hysteresis.
   */
  stepDepth?: number;
  /** Widest relay band before the run is refused as too noisy, loop unit. Default MAX_HYSTERESIS. */
  maxHysteresis?: number;
  /** Deepest first step, loop unit. Default MAX_STEP_DEPTH. */
  maxStepDepth?: number;
}

/** What the machine needs to know of the loop to start. */
export interface AutotuneStartInput {
  mode: Mode;
  setpoint: number;
  controller: 'pid' | 'hysteresis';
  /** The loop's actuators by side (absent: none on that side). */
  actuators: Partial<Record<Direction, 'relay' | 'continuous'>>;
  /**
   * The tuned actuator's mean level now, 0..1 (the PID's output on that side): the record's
   * model starts with the plant at rest at this level.
   */
  currentLevel: number;
  /** The plant is at rest with currentLevel (default true; see AutotuneMemory.startsAtRest). */
  atRest?: boolean;
}

/**
 * Default time limit: 48 h. The slowest benchmark plant (a large water mass, τ 4 h, θ 5 min)
 * needs about 6 (τ + θ) ≈ 24.5 h; twice that still ends a run that will never settle. The
 * status shows the expected end from the measured period once a cycle is done.
 */
export const DEFAULT_MAX_DURATION_MS = 48 * 3_600_000;
/**
 * Default depth of the first step, in bands. Started at rest at the setpoint, a relay around it
 * shows K/τ and θ but hardly K and τ apart: the value moves a few bands while the distance to
 * ambient (which sets the curvature, 1/τ) is tens of them, so K and τ come out up to 80 % off
 * together (measured, slow greenhouse). Holding the output low until the value is 10 bands
 * (≈ 1.5 °C with σ 0.05) below the setpoint first gives a step whose curvature carries them:
 * within 12 % on the four FOPDT plants (1 °C: within 12 %; 2 °C: within 6 %).
 */
export const STEP_DEPTH_BANDS = 10;
/**
 * The deepest first step, loop unit (°C; loop-autotune.ts scales it for other quantities): the actuator is held low until the value is this far past
 * the setpoint, however noisy the sensor. A fridge at 4 °C with a probe of σ 0.5 would otherwise
 * wait for 19.6 °C with its compressor off (10 bands of 1.56).
 */
export const MAX_STEP_DEPTH = 2;
/**
 * The widest relay band, loop unit: a sensor noisier than this needs (σ above 1/3) cannot give a
 * useful record within a safe swing, and the run is refused after the noise phase.
 */
export const MAX_HYSTERESIS = 1;
/** Readings held for the noise estimate: σ to about ±20 % (χ² with 9 degrees of freedom). */
export const NOISE_READINGS = 12;
/** Full cycles after the first (the open-loop step) that must agree. */
export const CYCLES_NEEDED = 2;
/** Relative agreement of the last two cycles' period and amplitude. */
export const STEADY_TOLERANCE = 0.15;
/** A run that has not settled after this many cycles is aborted (keeps the record bounded too). */
export const MAX_CYCLES = 20;
/** Samples kept; when full, every second one is dropped and later readings kept every 2nd (4th…). */
export const MAX_SAMPLES = 1500;
/**
 * Setpoint unreachable: the value has not moved a band towards the next switch point for this
 * long, and for at least as long as its progress so far took. Longer than any dead time of a
 * plant worth a relay experiment; the "as long as" part lets a slow plant take its time.
 */
export const STALL_MIN_MS = 30 * 60_000;
/**
 * A regulating relay's start whose value stays within one band under the held low level this
 * long is a plant at rest: the fit starts where it went flat (watchTurn). Shorter than
 * STALL_MIN_MS, so such a start is taken before it could count as a setpoint never reached.
 */
export const FLAT_MS = 15 * 60_000;
/**
 * A regulating relay's start: the value has turned under the held low level once it is this many
 * bands past its extreme since the start (3 bands ≥ 9σ: noise alone does not get there). The fit
 * starts there at the earliest (identify-half-rule.ts: and 1.2 dead times after the start), and
 * the first switch to high also waits until the value is the step depth past that extreme, so the
 * record always holds a clean open-loop step whose input is known.
 * Why: the PID's output is the relay's mean level, not its input over the last dead time (the
 * window's on/off pattern). Measured through reconcile on the room plant (σ 0.03, a cautious PI
 * regulating from 15 °C, seeds 1–5, started at 3–5 phases of the window): with 300 s windows, 600 s
 * windows and the duty band, 2, 1 and 10 runs of 15 fitted an integrating plant (K 10⁵–10⁸) when
 * the first switch to high came before a dead time had passed or the fit began inside the old
 * pattern; with the turn, 0 of 25 for each of 60, 120, 300, 600 s windows and the band, K, τ, θ
 * within 12 %, in ≤ 2.1 (τ + θ).
 */
export const TURN_BANDS = 3;

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

export type AutotuneStart = { ok: true; memory: AutotuneMemory } | { ok: false; reason: string };

export function startAutotune(
  input: AutotuneStartInput,
  options: AutotuneOptions,
  nowMs: number,
): AutotuneStart {
  if (input.controller !== 'pid') {
    return { ok: false, reason: 'autotune needs a PID controller (a hysteresis loop has no gains to tune)' };
  }
  if (input.mode === 'off') return { ok: false, reason: 'the loop is off' };
  const side = options.side ?? defaultSide(input.mode);
  if (side === undefined) {
    return { ok: false, reason: `mode ${input.mode} has two sides: say which one to tune (raise or lower)` };
  }
  const kind = input.actuators[side];
  if (kind === undefined) return { ok: false, reason: `the loop has no actuator to ${side} the value` };
  if (!sideAllowed(input.mode, side)) {
    return { ok: false, reason: `mode ${input.mode} does not let the ${side} side act` };
  }
  const highLevel = kind === 'relay' ? 1 : (options.highLevel ?? 1);
  const lowLevel = kind === 'relay' ? 0 : (options.lowLevel ?? 0);
  if (!(highLevel > lowLevel && lowLevel >= 0 && highLevel <= 1)) {
    return {
      ok: false,
      reason: `relay levels must satisfy 0 ≤ low < high ≤ 1 (got ${lowLevel}, ${highLevel})`,
    };
  }
  const currentLevel = clamp01(input.currentLevel);
  // Held steady for the noise: a continuous actuator where it is, a relay off (it has no
  // level in between); the record starts from the mean level either way.
  const holdLevel = kind === 'relay' ? lowLevel : currentLevel;
  return {
    ok: true,
    memory: {
      phase: 'noise',
      side,
      mode: input.mode,
      setpoint: input.setpoint,
      startedAtMs: nowMs,
      maxDurationMs: options.maxDurationMs ?? DEFAULT_MAX_DURATION_MS,
      ...(options.closedLoopS === undefined ? {} : { closedLoopS: options.closedLoopS }),
      minHysteresis: options.minHysteresis ?? 0.05,
      cyclesNeeded: options.cycles ?? CYCLES_NEEDED,
      ...(options.stepDepth === undefined ? {} : { stepDepth: options.stepDepth }),
      maxHysteresis: options.maxHysteresis ?? MAX_HYSTERESIS,
      maxStepDepth: options.maxStepDepth ?? MAX_STEP_DEPTH,
      highLevel,
      lowLevel,
      initialLevel: currentLevel,
      startsAtRest: input.atRest ?? true,
      ...(input.atRest === false && kind === 'relay' ? { turn: {} } : {}),
      ...(input.atRest === false && kind === 'continuous' ? { restCandidate: true } : {}),
      level: holdLevel,
      samples: [],
      keepEvery: 1,
      skipped: 0,
      switches: holdLevel === currentLevel ? [] : [[0, holdLevel]],
      cycles: 0,
    },
  };
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

export function stepAutotune(memory: AutotuneMemory, input: AutotuneInput, nowMs: number): AutotuneStep {
  if (!isActive(memory)) return { memory };
  const reason = abortReason(memory, input, nowMs);
  if (reason !== undefined) return { memory: abortAutotune(memory, reason, nowMs) };
  const reading = input.reading!;
  let next = memory;
  if (memory.lastReadingAtMs === undefined || reading.atMs > memory.lastReadingAtMs) {
    next = watchTurn(record(memory, reading), reading.value);
    next = next.phase === 'noise' ? endNoisePhase(next, nowMs) : relayStep(next, reading.value, nowMs);
  }
  if (!isActive(next)) return { memory: next };
  return { memory: next, level: next.level };
}

/**
 * The level really applied this cycle (after minimum on/off times), for the record: a switch the
 * machine wanted but the relay's minimum time held back is recorded when it happens.
 */
export function noteAppliedLevel(memory: AutotuneMemory, level: number, nowMs: number): AutotuneMemory {
  if (!isActive(memory)) return memory;
  // A driver's rounding (a continuous level to 0.001) is the level the machine asked for.
  const applied = Math.abs(level - memory.level) < APPLIED_TOLERANCE ? memory.level : level;
  const switches = [...memory.switches];
  const tMs = nowMs - memory.startedAtMs;
  const current = () => switches[switches.length - 1]?.[1] ?? memory.initialLevel;
  if (current() === applied) return memory;
  const last = switches[switches.length - 1];
  if (last !== undefined && last[0] === tMs) switches.pop();
  if (current() !== applied) switches.push([tMs, applied]);
  const recorded = { ...memory, switches };
  // A switch to high ends a cycle: whether the run is done is decided on the switch really
  // made (a minimum off time may have held it back since the crossing).
  const newHigh = switches[switches.length - 1]?.[0] === tMs && applied === memory.highLevel;
  return newHigh && memory.phase === 'relay' ? completeCycle(recorded, nowMs) : recorded;
}

const APPLIED_TOLERANCE = 0.002;

/**
 * Asks a running autotune to end with `reason` at its next step (or the next cycle that holds the
 * loop safe): a cancel between cycles then ends like an abort inside one. The first reason wins.
 */
export function requestAbort(memory: AutotuneMemory, reason: string): AutotuneMemory {
  if (!isActive(memory) || memory.pendingAbort !== undefined) return memory;
  return { ...memory, pendingAbort: reason };
}

/** Ends a run with a reason (a restart, a fault, a pending abort): the record is dropped. */
export function abortAutotune(memory: AutotuneMemory, reason: string, nowMs: number): AutotuneMemory {
  if (!isActive(memory)) return memory;
  const { approach: _a, pendingAbort: _p, ...rest } = memory;
  return { ...rest, phase: 'aborted', abortReason: reason, endedAtMs: nowMs, samples: [], switches: [] };
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

/** Progress for the status. */
export interface AutotuneProgress {
  phase: AutotunePhase;
  side: Direction;
  cycles: number;
  cyclesNeeded: number;
  elapsedMs: number;
  /** Expected time left from the last period; else the time left to the limit. */
  remainingMs: number;
  remainingIsLimit: boolean;
  noiseSigma?: number;
  hysteresis?: number;
}

export function autotuneProgress(memory: AutotuneMemory, nowMs: number): AutotuneProgress {
  const elapsedMs = (memory.endedAtMs ?? nowMs) - memory.startedAtMs;
  const needed = 1 + memory.cyclesNeeded;
  const limitLeftMs = Math.max(0, memory.maxDurationMs - elapsedMs);
  const lastHigh = lastHighSwitchMs(memory);
  const estimate =
    memory.lastPeriodS !== undefined && lastHigh !== undefined
      ? Math.max(0, (needed - memory.cycles) * memory.lastPeriodS * 1000 - (elapsedMs - lastHigh))
      : undefined;
  const ended = !isActive(memory);
  return {
    phase: memory.phase,
    side: memory.side,
    cycles: memory.cycles,
    cyclesNeeded: needed,
    elapsedMs,
    remainingMs: ended ? 0 : Math.min(estimate ?? limitLeftMs, limitLeftMs),
    remainingIsLimit: !ended && estimate === undefined,
    ...(memory.noise ? { noiseSigma: memory.noise.sigma } : {}),
    ...(memory.hysteresis === undefined ? {} : { hysteresis: memory.hysteresis }),
  };
}

function defaultSide(mode: Mode): Direction | undefined {
  if (mode === 'heat' || mode === 'humidify') return 'raise';
  if (mode === 'cool' || mode === 'dehumidify') return 'lower';
  return undefined;
}

function sideAllowed(mode: Mode, side: Direction): boolean {
  if (mode === 'heat_cool' || mode === 'auto') return true;
  return defaultSide(mode) === side;
}

function abortReason(memory: AutotuneMemory, input: AutotuneInput, nowMs: number): string | undefined {
  if (memory.pendingAbort !== undefined) return memory.pendingAbort;
  if (input.interrupted !== undefined) return input.interrupted;
  if (input.mode !== memory.mode) return `mode changed from ${memory.mode} to ${input.mode}`;
  if (input.setpoint !== memory.setpoint)
    return `setpoint changed from ${memory.setpoint} to ${input.setpoint}`;
  if (input.sensorProblem !== undefined) return `sensor: ${input.sensorProblem}`;
  if (input.reading === undefined) return 'sensor: no reading';
  if (!Number.isFinite(input.reading.value)) return `sensor: reading is ${input.reading.value}`;
  if (nowMs - memory.startedAtMs > memory.maxDurationMs) {
    return `time limit of ${hours(memory.maxDurationMs)} reached after ${memory.cycles} cycles without a steady oscillation`;
  }
  if (memory.cycles > MAX_CYCLES) return `no steady oscillation after ${MAX_CYCLES} cycles`;
  const a = memory.approach;
  if (a && nowMs - a.bestAtMs > Math.max(STALL_MIN_MS, a.bestAtMs - a.sinceMs)) {
    const up = movesUp(memory);
    const towards = up ? 'rise above' : 'fall below';
    const edge = memory.setpoint + (up ? 1 : -1) * (memory.hysteresis ?? 0);
    const at = memory.level === memory.highLevel ? 'full output' : 'the output at its low level';
    return `setpoint unreachable: with ${at} the value did not ${towards} ${round(edge)} (it stays near ${round(a.best)} after ${minutes(nowMs - a.sinceMs)})`;
  }
  return undefined;
}

/** Adds a reading to the record, thinning it by 2 when full. */
function record(memory: AutotuneMemory, reading: Reading): AutotuneMemory {
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

function endNoisePhase(memory: AutotuneMemory, nowMs: number): AutotuneMemory {
  if (memory.samples.length < NOISE_READINGS) return memory;
  const noise = estimateNoise(autotuneExperiment(memory).samples);
  const hysteresis = Math.max(3 * noise.sigma, noise.quantum, memory.minHysteresis);
  const maxHysteresis = memory.maxHysteresis ?? MAX_HYSTERESIS;
  if (hysteresis > maxHysteresis) {
    return abortAutotune(
      memory,
      `the sensor is too noisy for an autotune: σ ${round(noise.sigma)} (steps of ${round(noise.quantum)}) needs a relay band of ±${round(hysteresis)}, at most ±${round(maxHysteresis)}`,
      nowMs,
    );
  }
  const value = memory.samples[memory.samples.length - 1]![1];
  // The relay starts towards the setpoint: below it a heater goes to high at once (the first
  // cycle starts now), above it to low. A continuous actuator held in between always moves.
  const stepDepth =
    memory.stepDepth ?? Math.min(STEP_DEPTH_BANDS * hysteresis, memory.maxStepDepth ?? MAX_STEP_DEPTH);
  const past = pushesUp(memory) ? value < memory.setpoint - stepDepth : value > memory.setpoint + stepDepth;
  // A regulating relay waits for its turn first (relayStep): it stays low.
  const level = past && memory.turn === undefined ? memory.highLevel : memory.lowLevel;
  const started: AutotuneMemory = {
    ...noteAppliedLevel({ ...memory, level }, level, nowMs),
    phase: 'relay',
    noise,
    hysteresis,
    stepDepth,
    relayStartedAtMs: nowMs,
    approach: { sinceMs: nowMs, best: value, bestAtMs: nowMs },
  };
  return started;
}

/** Relay on the reading, the unreachable watch, and the stop rule at each new cycle. */
function relayStep(memory: AutotuneMemory, value: number, nowMs: number): AutotuneMemory {
  const h = memory.hysteresis!;
  const high = memory.level === memory.highLevel;
  const rising = movesUp(memory);
  // The first switch to high waits for the step depth (a deeper first step carries the gain).
  const firstHigh = !high && !relayPhase(memory).some(([, level]) => level === memory.highLevel);
  const reach = firstHigh ? Math.max(h, memory.stepDepth ?? h) : h;
  const crossed =
    (rising ? value > memory.setpoint + reach : value < memory.setpoint - reach) &&
    (!firstHigh || turned(memory));
  if (crossed) {
    const level = high ? memory.lowLevel : memory.highLevel;
    const switched = noteAppliedLevel({ ...memory, level }, level, nowMs);
    const { approach: _reset, ...rest } = switched;
    return isActive(rest) ? { ...rest, approach: { sinceMs: nowMs, best: value, bestAtMs: nowMs } } : rest;
  }
  const a = memory.approach ?? { sinceMs: nowMs, best: value, bestAtMs: nowMs };
  const better = rising ? value >= a.best + h : value <= a.best - h;
  // After a switch the value goes on the old way for a dead time: progress counts from where
  // it turns. Only for STALL_MIN_MS: a value that never turns (ambient above the setpoint with
  // the heater off) is a setpoint that cannot be reached.
  const away = rising ? value < a.best : value > a.best;
  const turning = away && nowMs - a.sinceMs < STALL_MIN_MS;
  return { ...memory, approach: better || turning ? { ...a, best: value, bestAtMs: nowMs } : a };
}

/** After a switch to high: the cycle count, and done once the last cycles agree. */
function completeCycle(memory: AutotuneMemory, nowMs: number): AutotuneMemory {
  const highs = relayPhase(memory).filter(([, level]) => level === memory.highLevel);
  if (highs.length < 2) return memory;
  const lastPeriodS = (highs[highs.length - 1]![0] - highs[highs.length - 2]![0]) / 1000;
  const cycles = highs.length - 1;
  const counted = { ...memory, cycles, lastPeriodS };
  if (cycles < 1 + memory.cyclesNeeded) return counted;
  const experiment = autotuneExperiment(counted);
  // Cycles from the relay's own switches: a relay that a minimum on time held on at the start
  // is in the record (the plant saw it) but is no cycle.
  const cyclesOnly = {
    ...experiment,
    switches: relayPhase(counted).map(([tMs, level]) => ({ tMs: counted.startedAtMs + tMs, level })),
  };
  const check = analyseRelayOscillation(cyclesOnly, { cycles: 1, tolerance: STEADY_TOLERANCE });
  if (check.state !== 'steady') return counted;
  return finish(
    counted,
    experiment,
    analyseRelayOscillation(cyclesOnly, { cycles: memory.cyclesNeeded }),
    nowMs,
  );
}

function finish(
  memory: AutotuneMemory,
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  nowMs: number,
): AutotuneMemory {
  const run = resultOfRun(memory, experiment, analysis, nowMs);
  if (!run.ok) return abortAutotune(memory, run.reason, nowMs);
  const { approach: _a, ...rest } = memory;
  return { ...rest, phase: 'done', endedAtMs: nowMs, result: run.result, samples: [], switches: [] };
}

/**
 * Before the first switch to high of a regulating relay's run: the value's extreme since the
 * start, and where it turned (TURN_BANDS bands past it; a new extreme starts the watch again).
 */
function watchTurn(memory: AutotuneMemory, value: number): AutotuneMemory {
  const turn = memory.turn;
  if (turn === undefined || relayPhase(memory).some(([, level]) => level === memory.highLevel)) return memory;
  if (turn.fitFromMs !== undefined) return memory;
  const h = memory.hysteresis;
  const nowMs = memory.lastReadingAtMs! - memory.startedAtMs;
  const flat = watchFlat(turn.flat, value, nowMs, h);
  // At the low level the value moves down for a heater: its extreme is the highest value.
  const sign = pushesUp(memory) ? 1 : -1;
  if (turn.extreme === undefined || sign * (value - turn.extreme) > 0) {
    return { ...memory, turn: { extreme: value, flat } };
  }
  if (h !== undefined && sign * (turn.extreme - value) >= TURN_BANDS * h) {
    return { ...memory, turn: { ...turn, flat, fitFromMs: nowMs } };
  }
  // A value that does not move under the held level is a plant at rest there (a chamber at its
  // ambient when the loop had only begun to regulate): it will never turn, and its input since it
  // went flat is known, so the fit starts where it went flat.
  if (nowMs - flat.sinceMs >= FLAT_MS) return { ...memory, turn: { ...turn, flat, fitFromMs: flat.sinceMs } };
  return { ...memory, turn: { ...turn, flat } };
}

/** The flat stretch's watch: restarted wherever the value leaves one band (h) of where it began. */
function watchFlat(
  flat: { value: number; sinceMs: number } | undefined,
  value: number,
  nowMs: number,
  h: number | undefined,
): { value: number; sinceMs: number } {
  if (flat === undefined || h === undefined || Math.abs(value - flat.value) > h)
    return { value, sinceMs: nowMs };
  return flat;
}

/**
 * A regulating relay's first switch to high waits until the value has turned (TURN_BANDS bands
 * past its extreme since the start: from there the input is known). The step's depth is then the
 * setpoint's condition (`reach`, at most MAX_STEP_DEPTH past the setpoint), never a depth counted
 * from the extreme: a fridge already far above its setpoint would otherwise stay off until it is
 * that much warmer still.
 */
function turned(memory: AutotuneMemory): boolean {
  const turn = memory.turn;
  return turn === undefined || turn.fitFromMs !== undefined;
}

/** The switches since the relay phase began (the noise phase's are the plant's input only). */
function relayPhase(memory: AutotuneMemory): [number, number][] {
  if (memory.relayStartedAtMs === undefined) return [];
  const fromMs = memory.relayStartedAtMs - memory.startedAtMs;
  return memory.switches.filter(([tMs]) => tMs >= fromMs);
}

function lastHighSwitchMs(memory: AutotuneMemory): number | undefined {
  for (let i = memory.switches.length - 1; i >= 0; i--) {
    if (memory.switches[i]![1] === memory.highLevel) return memory.switches[i]![0];
  }
  return undefined;
}

/** At the level in force the value goes up: a heater at high, a cooler at low. */
function movesUp(memory: AutotuneMemory): boolean {
  return pushesUp(memory) === (memory.level === memory.highLevel);
}

/** The tuned actuator raises the value at its high level (a heater), or lowers it (a cooler). */
function pushesUp(memory: AutotuneMemory): boolean {
  return memory.side === 'raise';
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function hours(ms: number): string {
  return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
}

function minutes(ms: number): string {
  return `${Math.round(ms / 60_000)} min`;
}
