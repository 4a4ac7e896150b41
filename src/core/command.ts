import { isAheadOfNow } from './time.js';
import type { ActuatorLevel } from './types.js';

/**
 * Idempotent act: decides whether an actuator must be written this cycle, by comparing the
 * wanted level with the last commanded and the observed one — never from a remembered
 * sequence of events.
 *
 * Two resolutions, because sending and confirming are different questions:
 * - SEND_RESOLUTION: a wanted level at least this far from the level last commanded is a new
 *   level, and is sent. Deciding from the last command (not from the observed level) keeps
 *   small moves of a continuous output from being swallowed: with the old 0.005 tolerance on the
 *   observed level, a PI's output moved in steps of 0.005 with a backlash (0.1 °C on a K = 20
 *   heater), and the loop did up to 2.3× worse than its bare PID after a 0.5 °C setpoint step
 *   (`npm run bench:control`, "act step" table, scenario E). SEND_RESOLUTION is half a step of
 *   the level grid (LEVEL_STEP, levelOnGrid): a level on the grid is sent whenever its grid
 *   step changes, so each regulating send moves the commanded level by at least one step and
 *   the sends are bounded by the output's total variation / LEVEL_STEP (and one per cycle); a
 *   level held steady is never re-sent (no dither). Rounding to a grid, unlike a threshold on
 *   the change, adds no backlash (no lag): the actuator is always within half a step of wanted.
 * - LEVEL_TOLERANCE (0.005): the observed level confirms a command within this, because
 *   drivers round (a percent plug reports 0.53 for 0.5312).
 *
 * - wanted = last commanded and observed confirms it: nothing to do, except a keep-alive
 *   re-assert every `keepAliveMs`.
 * - a new level (never asked, or moved by SEND_RESOLUTION or more): command it, unless the
 *   actuator is already exactly there (a relay switched by hand to what we want).
 * - we asked and it was confirmed, but now differs: someone switched it by hand (drift):
 *   command it again at once and say so.
 * - we asked and it is still unconfirmed: retry with exponential backoff (retryInitialMs,
 *   doubling, capped at keepAliveMs), not on every cycle.
 *
 * Confirmed means the actuator is at the level last commanded to it (or already at the wanted
 * one). A new level sent this cycle cannot have been seen yet: it leaves the actuator
 * confirmed when it was at the previous command, so a continuous output that moves every cycle
 * does not make ActuatorConfirmed flicker; an actuator that then fails to follow shows as
 * unconfirmed on the next cycle.
 */

/** Two levels closer than this are the same to an observer (a driver's rounding). */
export const LEVEL_TOLERANCE = 0.005;

/** Steps of the level grid per unit of output. */
const GRID_STEPS = 10_000;

/**
 * Grid of continuous levels, 0.01 % of full output: finer than any driver (a 10-bit PWM is
 * 0.1 %), coarse enough that a level steady to the grid is not re-sent for float noise. A
 * 0.001 grid (actuation.ts's rounding in an earlier version) still cost up to 5 % of IAE after a
 * small setpoint step (room plant 20 % off its tuning, scenario E); 0.0001 costs at most 0.5 %
 * on every benchmark plant and scenario.
 */
export const LEVEL_STEP = 1 / GRID_STEPS;

/** A continuous level on the grid (divided by an integer: 0.3001, not 0.30010000000000003). */
export function levelOnGrid(level: number): number {
  return Math.round(level * GRID_STEPS) / GRID_STEPS;
}

/** A wanted level this far from the last commanded one is sent: half a grid step. */
export const SEND_RESOLUTION = LEVEL_STEP / 2;

export interface CommandMemory {
  /** Level last commanded. */
  level: number;
  /** When it was last sent, ms. */
  atMs: number;
  /** Sends of this level since it was last confirmed. */
  attempts: number;
  /** The actuator was seen at `level` after the last send. */
  confirmed: boolean;
}

export type CommandReason = 'regulate' | 'safe-state' | 'retry' | 'keep-alive' | 'drift';

export interface ActuatorCommand {
  actuatorId: string;
  level: number;
  reason: CommandReason;
  /** Why the level is wanted, for people reading logs and events. */
  detail: string;
}

/** Why a level is wanted: regulation or the safe state, and a detail for people. */
export interface WantedWhy {
  reason: 'regulate' | 'safe-state';
  detail: string;
}

export interface CommandDecision {
  command?: ActuatorCommand;
  memory: CommandMemory;
  /** Observed equals wanted (before this cycle's command, if any). */
  confirmed: boolean;
  /** When this actuator next needs a cycle (retry or keep-alive). */
  nextWakeMs: number;
}

export interface CommandTiming {
  keepAliveMs: number;
  retryInitialMs: number;
  /**
   * Smallest move of the wanted level that is sent. Default SEND_RESOLUTION; the benchmark sets
   * coarser ones to measure what swallowing small moves costs.
   */
  sendResolution?: number;
}

export function levelsEqual(a: ActuatorLevel, b: ActuatorLevel): boolean {
  return a !== undefined && b !== undefined && Math.abs(a - b) <= LEVEL_TOLERANCE;
}

export function decideCommand(
  actuatorId: string,
  wanted: number,
  observed: ActuatorLevel,
  last: CommandMemory | undefined,
  nowMs: number,
  timing: CommandTiming,
  why: WantedWhy,
): CommandDecision {
  const send = (reason: CommandReason, attempts: number, confirmed: boolean): CommandDecision => {
    const memory = { level: wanted, atMs: nowMs, attempts, confirmed: false };
    return {
      command: { actuatorId, level: wanted, reason, detail: why.detail },
      memory,
      confirmed,
      nextWakeMs: nowMs + retryDelayMs(attempts, timing),
    };
  };

  // A send time in the future (the clock went back) counts as now, so keep-alives and retries
  // are delayed by at most their own period, not by the size of the clock jump.
  if (last && isAheadOfNow(last.atMs, nowMs)) last = { ...last, atMs: nowMs };

  const resolution = timing.sendResolution ?? SEND_RESOLUTION;
  if (last === undefined || !sameCommand(last.level, wanted, resolution)) {
    // Already there, to the send resolution (a relay switched by hand to what we want, or a
    // continuous actuator that holds it after a restart): adopt it instead of writing it. A
    // rounding driver's 0.53 for 0.5312 is not "there": one write makes sure.
    if (observed !== undefined && sameCommand(observed, wanted, resolution)) {
      return holding({ level: wanted, atMs: nowMs });
    }
    // The first command ever is unconfirmed; a new level leaves the actuator confirmed if it
    // was at the previous one (it cannot have answered the new one yet).
    return send(why.reason, 1, last !== undefined && levelsEqual(observed, last.level));
  }

  if (levelsEqual(observed, last.level)) return holding(last);
  if (last.confirmed) return send('drift', 1, false);
  const retryAtMs = last.atMs + retryDelayMs(last.attempts, timing);
  if (nowMs >= retryAtMs) return send('retry', last.attempts + 1, false);
  return { memory: last, confirmed: false, nextWakeMs: retryAtMs };

  /** Observed confirms the command in `base`: keep it, or re-assert it when keep-alive is due. */
  function holding(base: Pick<CommandMemory, 'level' | 'atMs'>): CommandDecision {
    if (nowMs - base.atMs >= timing.keepAliveMs) {
      // A re-assert of a confirmed level stays confirmed: a change seen after it is drift.
      const sent = send('keep-alive', 0, true);
      return { ...sent, memory: { ...sent.memory, confirmed: true }, nextWakeMs: nowMs + timing.keepAliveMs };
    }
    return {
      memory: { level: base.level, atMs: base.atMs, attempts: 0, confirmed: true },
      confirmed: true,
      nextWakeMs: base.atMs + timing.keepAliveMs,
    };
  }
}

/** Two commanded levels are the same command: closer than the send resolution. */
export function sameCommand(a: number, b: number, resolution = SEND_RESOLUTION): boolean {
  return Math.abs(a - b) < resolution;
}

/** Backoff before re-sending an unconfirmed command: initial, doubling, capped at keep-alive. */
export function retryDelayMs(attempts: number, timing: CommandTiming): number {
  const exponent = Math.max(0, attempts - 1);
  return Math.min(timing.keepAliveMs, timing.retryInitialMs * 2 ** Math.min(exponent, 30));
}
