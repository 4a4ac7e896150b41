/**
 * reconcile's first step, the gate (reconcile.ts): whether the loop may regulate this cycle, or
 * why every actuator is held safe; and when the reading it judged may go stale.
 */
import type { LatchedFault } from './effect-watch.js';
import { trippedInterlock } from './interlock.js';
import type { LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopObserved } from './loop-state.js';
import { freshnessChangeAtMs, judgeReading, type ReadingVerdict } from './sensor-health.js';

/** Step 1: whether the loop may regulate this cycle, and if not, why every actuator is safe. */
export type Gate = { verdict: ReadingVerdict; interlock: { message: string } | undefined } & (
  | { regulate: true; measured: number }
  | { regulate: false; detail: string }
);

export function gateCycle(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  latched: LatchedFault | undefined,
  nowMs: number,
): Gate {
  const verdict = readingVerdict(spec, observed, nowMs);
  const interlock = trippedInterlock(spec, observed.interlocks, nowMs);
  const judged = { verdict, interlock };
  if (latched) return { ...judged, regulate: false, detail: latchedDetail(latched) };
  if (desired.mode === 'off') return { ...judged, regulate: false, detail: 'mode off' };
  if (!verdict.ok) return { ...judged, regulate: false, detail: sensorDetail(spec, verdict) };
  if (interlock) return { ...judged, regulate: false, detail: interlock.message };
  return { ...judged, regulate: true, measured: verdict.value };
}

/**
 * The reading's verdict: a sensor set's, when the loop has several sensors (its message names
 * each one dropped); else the one sensor's reading judged. A set loop observed without a result
 * (a runtime that did not combine) has no reading: safe, never regulating on an unjudged value.
 */
function readingVerdict(spec: LoopSpec, observed: LoopObserved, nowMs: number): ReadingVerdict {
  if (observed.sensorSet) return observed.sensorSet.verdict;
  if (spec.sensorSet) return { ok: false, reason: 'Missing', message: 'sensor set not combined' };
  return judgeReading(observed.reading, nowMs, spec);
}

export function latchedDetail(fault: LatchedFault): string {
  return `latched fault ${fault.reason}`;
}

/**
 * Why a bad reading holds the actuators safe (their command's detail): the reason, and for a
 * sensor set which sensors failed and why (`sensor Stale: 1 of 3 sensors healthy, 2 needed (…)`).
 */
function sensorDetail(spec: LoopSpec, verdict: Exclude<ReadingVerdict, { ok: true }>): string {
  return spec.sensorSet ? `sensor ${verdict.reason}: ${verdict.message}` : `sensor ${verdict.reason}`;
}

/**
 * When a fresh reading may go stale (core/liveness.ts); undefined without one. A set's: when its
 * first fresh member may, by its own limit (the combined reading's time is the newest member's).
 */
export function staleAtMs(
  spec: LoopSpec,
  observed: LoopObserved,
  gate: Gate,
  nowMs: number,
): number | undefined {
  if (!gate.verdict.ok) return undefined;
  if (observed.sensorSet) return observed.sensorSet.staleAtMs;
  return observed.reading ? freshnessChangeAtMs(observed.reading, nowMs, spec.staleAfterMs) : undefined;
}
