import { isAheadOfNow } from './time.js';
import type { ActuatorLevel } from './types.js';

/**
 * Idempotent act: decides whether an actuator must be written this cycle, by comparing the
 * wanted level with the observed one — never from a remembered sequence of events.
 *
 * - observed = wanted: nothing to do, except a keep-alive re-assert every `keepAliveMs`.
 * - observed ≠ wanted and we never asked for this level: command it.
 * - we asked and it was confirmed, but now differs: someone switched it by hand (drift):
 *   command it again at once and say so.
 * - we asked and it is still unconfirmed: retry with exponential backoff (retryInitialMs,
 *   doubling, capped at keepAliveMs), not on every cycle.
 */

/** Two levels closer than this are the same (a continuous actuator's rounding). */
export const LEVEL_TOLERANCE = 0.005;

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
  const send = (reason: CommandReason, attempts: number): CommandDecision => {
    const memory = { level: wanted, atMs: nowMs, attempts, confirmed: false };
    return {
      command: { actuatorId, level: wanted, reason, detail: why.detail },
      memory,
      confirmed: false,
      nextWakeMs: nowMs + retryDelayMs(attempts, timing),
    };
  };

  // A send time in the future (the clock went back) counts as now, so keep-alives and retries
  // are delayed by at most their own period, not by the size of the clock jump.
  if (last && isAheadOfNow(last.atMs, nowMs)) last = { ...last, atMs: nowMs };
  if (levelsEqual(observed, wanted)) {
    const base = last && levelsEqual(last.level, wanted) ? last : { level: wanted, atMs: nowMs, attempts: 0 };
    if (nowMs - base.atMs >= timing.keepAliveMs) {
      // A re-assert of a confirmed level stays confirmed: a change seen after it is drift.
      const sent = send('keep-alive', 0);
      return {
        ...sent,
        memory: { ...sent.memory, confirmed: true },
        confirmed: true,
        nextWakeMs: nowMs + timing.keepAliveMs,
      };
    }
    return {
      memory: { ...base, attempts: 0, confirmed: true },
      confirmed: true,
      nextWakeMs: base.atMs + timing.keepAliveMs,
    };
  }

  if (last === undefined || !levelsEqual(last.level, wanted)) return send(why.reason, 1);
  if (last.confirmed) return send('drift', 1);
  const retryAtMs = last.atMs + retryDelayMs(last.attempts, timing);
  if (nowMs >= retryAtMs) return send('retry', last.attempts + 1);
  return { memory: last, confirmed: false, nextWakeMs: retryAtMs };
}

/** Backoff before re-sending an unconfirmed command: initial, doubling, capped at keep-alive. */
export function retryDelayMs(attempts: number, timing: CommandTiming): number {
  const exponent = Math.max(0, attempts - 1);
  return Math.min(timing.keepAliveMs, timing.retryInitialMs * 2 ** Math.min(exponent, 30));
}
