/**
 * Time-proportioning ("slow PWM") for relays: a duty 0..1 becomes one on-pulse at the start
 * of each window of `windowMs`, lasting duty · windowMs.
 *
 * Why these rules:
 * - Duty 0 and 1 are steady off and steady on: a relay at full power never clicks at window
 *   boundaries.
 * - A pulse shorter than `minOnMs` is skipped, and a gap shorter than `minOffMs` is filled
 *   (the relay stays on), so small duty changes near 0 or 1 never produce runt pulses.
 * - Minimum on and off times hold whatever the duty does (compressor protection): a switch
 *   they forbid waits, and `nextChangeMs` says when it becomes allowed.
 * - At most one pulse per window: once this window's pulse has ended, a rising duty waits for
 *   the next window instead of switching the relay back on (no chatter).
 */
import { clampFraction } from './numbers.js';
import { atMostNow, isAheadOfNow } from './time.js';

export interface TimeProportioningParams {
  /** Length of one window, ms (e.g. 600 000 = 10 min). */
  windowMs: number;
  /** Shortest allowed on time, ms (0 = none). */
  minOnMs: number;
  /** Shortest allowed off time, ms (0 = none). A compressor wants minutes. */
  minOffMs: number;
}

export interface TimeProportioningMemory {
  /** Start of the current window, ms; undefined until the first call. */
  windowStartMs?: number;
  /** What the relay was last told. */
  isOn: boolean;
  /** When the relay last changed state, ms; undefined if never (no minimum time applies). */
  lastSwitchMs?: number;
  /** The current window's pulse has ended: stay off until the next window. */
  pulseEnded: boolean;
}

export interface TimeProportioningResult {
  on: boolean;
  memory: TimeProportioningMemory;
  /** The next time the relay may change by itself (pulse end, next window, min time expiry). */
  nextChangeMs: number;
}

export function timeProportioningInitialMemory(isOn = false, lastSwitchMs?: number): TimeProportioningMemory {
  return { isOn, pulseEnded: false, ...(lastSwitchMs === undefined ? {} : { lastSwitchMs }) };
}

/** Pulse length for a duty, after the minimum on/off rules. */
export function effectiveOnMs(duty: number, params: TimeProportioningParams): number {
  const { windowMs, minOnMs, minOffMs } = params;
  // Whole milliseconds: switch times are compared and scheduled, fractions only add float noise.
  const onMs = Math.round(clampFraction(duty) * windowMs);
  if (onMs <= 0 || onMs < minOnMs) return 0;
  if (onMs >= windowMs || windowMs - onMs < minOffMs) return windowMs;
  return onMs;
}

export function timeProportion(
  duty: number,
  memory: TimeProportioningMemory,
  nowMs: number,
  params: TimeProportioningParams,
): TimeProportioningResult {
  const { windowMs } = params;
  let windowStartMs = memory.windowStartMs ?? nowMs;
  let pulseEnded = memory.pulseEnded;
  if (isAheadOfNow(windowStartMs, nowMs)) {
    // The clock went back (NTP on a Pi without a real-time clock): start a window now rather
    // than treat "before the window" as inside a pulse.
    windowStartMs = nowMs;
    pulseEnded = false;
  } else if (nowMs >= windowStartMs + windowMs) {
    windowStartMs += Math.floor((nowMs - windowStartMs) / windowMs) * windowMs;
    pulseEnded = false;
  }
  const windowEndMs = windowStartMs + windowMs;
  const pulseEndMs = windowStartMs + effectiveOnMs(duty, params);
  const wantOn = !pulseEnded && nowMs < pulseEndMs;

  const held = holdForMinimumTimes(wantOn, memory.isOn, memory.lastSwitchMs, nowMs, params);
  const switched = held.on !== memory.isOn;
  if (memory.isOn && !held.on) pulseEnded = true;

  let nextChangeMs: number;
  if (held.untilMs !== undefined) nextChangeMs = held.untilMs;
  else if (held.on && pulseEndMs < windowEndMs) nextChangeMs = Math.max(pulseEndMs, nowMs);
  else nextChangeMs = windowEndMs;

  return {
    on: held.on,
    nextChangeMs,
    memory: {
      windowStartMs,
      isOn: held.on,
      pulseEnded,
      ...(switched
        ? { lastSwitchMs: nowMs }
        : memory.lastSwitchMs === undefined
          ? {}
          : { lastSwitchMs: memory.lastSwitchMs }),
    },
  };
}

/**
 * Applies minimum on/off times to a wanted relay state. Returns the state to command now and,
 * when a wanted switch is being held back, the time it becomes allowed.
 */
export function holdForMinimumTimes(
  wantOn: boolean,
  isOn: boolean,
  lastSwitchMs: number | undefined,
  nowMs: number,
  params: { minOnMs: number; minOffMs: number },
): { on: boolean; untilMs?: number } {
  if (wantOn === isOn || lastSwitchMs === undefined) return { on: wantOn };
  const minimumMs = isOn ? params.minOnMs : params.minOffMs;
  // A switch time in the future (the clock went back) counts as now: the minimum holds in
  // full, but never longer — a heater is not kept on for the size of a clock jump.
  const allowedAtMs = atMostNow(lastSwitchMs, nowMs) + minimumMs;
  if (nowMs >= allowedAtMs) return { on: wantOn };
  return { on: isOn, untilMs: allowedAtMs };
}
