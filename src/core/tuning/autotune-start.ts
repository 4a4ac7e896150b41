import type { Direction, Mode } from '../types.js';
import type { AutotuneMemory } from './autotune-memory.js';
import { MAX_HYSTERESIS, MAX_STEP_DEPTH } from './autotune-noise-phase.js';

/**
 * The start of an autotune: what a loop must be to be tuned (a PID, a side that may act, an
 * actuator on it, sane relay levels) and the memory its run begins with (the noise phase, the
 * output held).
 */

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
/** Full cycles after the first (the open-loop step) that must agree. */
export const CYCLES_NEEDED = 2;

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

function defaultSide(mode: Mode): Direction | undefined {
  if (mode === 'heat' || mode === 'humidify') return 'raise';
  if (mode === 'cool' || mode === 'dehumidify') return 'lower';
  return undefined;
}

function sideAllowed(mode: Mode, side: Direction): boolean {
  if (mode === 'heat_cool' || mode === 'auto') return true;
  return defaultSide(mode) === side;
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
