import { type AutotuneMemory, pushesUp, relayPhase } from './autotune-memory.js';

/**
 * A regulating relay's start: before its first switch to high the value is watched under the
 * held low level until it has turned (or gone flat), so that the fit starts where the plant's
 * input history is known.
 */

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

/**
 * Before the first switch to high of a regulating relay's run: the value's extreme since the
 * start, and where it turned (TURN_BANDS bands past it; a new extreme starts the watch again).
 */
export function watchTurn(memory: AutotuneMemory, value: number): AutotuneMemory {
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
export function turned(memory: AutotuneMemory): boolean {
  const turn = memory.turn;
  return turn === undefined || turn.fitFromMs !== undefined;
}
