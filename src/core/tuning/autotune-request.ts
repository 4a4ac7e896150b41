/**
 * The stored autotune request acted on once per generation (like a fault reset,
 * core/fault-reset.ts): a start begins the relay experiment, a cancel asks the run to abort, and
 * a start stored before this process started ends as aborted instead of starting. Pure.
 */
import type { LoopSpec } from '../loop-spec.js';
import { AUTOTUNE_INTERRUPTED, type LoopDesired, type LoopMemory, type LoopObserved } from '../loop-state.js';
import { cancelLoopAutotune, startLoopAutotune } from '../reconcile.js';
import type { AutotuneOptions } from './autotune.js';
import { abortAutotune, isActive } from './autotune.js';
import type { AutotuneDefaults, AutotuneEvent, AutotuneMark } from './loop-tuning.js';
import type { AutotuneRequest } from './stored-tuning.js';

/** The core's options for a request: the loop's config defaults, the request's own winning. */
export function autotuneOptions(
  defaults: AutotuneDefaults | undefined,
  request: AutotuneRequest,
): AutotuneOptions {
  const merged = {
    ...(defaults?.closedLoopS === undefined ? {} : { closedLoopS: defaults.closedLoopS }),
    ...(defaults?.maxDurationS === undefined ? {} : { maxDurationS: defaults.maxDurationS }),
    ...withoutUndefined(request.options),
  };
  return {
    ...(merged.side === undefined ? {} : { side: merged.side }),
    ...(merged.closedLoopS === undefined ? {} : { closedLoopS: merged.closedLoopS }),
    ...(merged.maxDurationS === undefined ? {} : { maxDurationMs: merged.maxDurationS * 1000 }),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A start request older than this when a loop first reads it is not acted on. A loop reads a
 * request within seconds (the daemon triggers a cycle when it stores one; a failing cycle
 * retries within a minute), so an older one is a request the memory that acted on it has lost
 * (a memory that could not be read, a loop re-added): a relay experiment nobody asked for now
 * must not start by surprise.
 */
export const START_REQUEST_MAX_AGE_MS = 15 * 60_000;

/** The stored request a memory applies this cycle: the newest, and only once (by generation). */
export function applyStoredAutotuneRequest<M extends LoopMemory & AutotuneMark>(
  input: {
    spec: LoopSpec;
    desired: LoopDesired;
    observed: LoopObserved;
    defaults: AutotuneDefaults | undefined;
    request: (AutotuneRequest & { source?: string }) | undefined;
    /**
     * The request was stored before this process started (its generation is not newer than the
     * one the loop found at start). A start the memory has not acted on is then one a crash
     * interrupted (memory is written in batches, and a kill can come before it): it ends as
     * aborted, never starts a relay experiment nobody asked this process for.
     */
    storedBeforeStart?: boolean;
  },
  memory: M,
  nowMs: number,
): { memory: M; event?: AutotuneEvent } {
  const { spec, desired, observed, defaults, request } = input;
  if (request === undefined || memory.autotuneRequestGeneration === request.generation) return { memory };
  // A newer request answers the refusal of the one before.
  const { autotuneRefused: _answered, ...rest } = memory;
  const marked = { ...rest, autotuneRequestGeneration: request.generation } as M;
  if (request.action === 'cancel') {
    if (!isActive(memory.autotune)) return { memory: marked };
    const reason = request.source ? `cancelled by ${request.source}` : 'cancelled';
    return { memory: cancelLoopAutotune(marked, reason, nowMs) as M };
  }
  const options = autotuneOptions(defaults, request);
  if (input.storedBeforeStart === true) {
    return interruptedStart({ spec, desired, observed, options }, marked, request.generation, nowMs);
  }
  const ageMs = nowMs - request.atMs;
  const started =
    ageMs > START_REQUEST_MAX_AGE_MS
      ? { ok: false as const, reason: `the request is ${Math.round(ageMs / 60_000)} min old: ask again` }
      : startLoopAutotune(spec, desired, observed, marked, options, nowMs);
  if (!started.ok) {
    const autotuneRefused = { generation: request.generation, reason: started.reason, atMs: nowMs };
    return {
      memory: { ...marked, autotuneRefused },
      event: {
        kind: 'autotune-refused',
        message: `autotune not started: ${started.reason}`,
        data: { options },
      },
    };
  }
  return { memory: started.memory as M };
}

/**
 * A start stored before this process and never acted on by the memory it resumed: the run it
 * asked for (maybe running when the process died) is recorded as aborted, "interrupted by a
 * restart", with an event, so status, events and Home Assistant say so; nothing starts. A run
 * the resumed memory still shows as active was already asked to abort (resumeLoopMemory).
 */
function interruptedStart<M extends LoopMemory & AutotuneMark>(
  input: { spec: LoopSpec; desired: LoopDesired; observed: LoopObserved; options: AutotuneOptions },
  marked: M,
  generation: number,
  nowMs: number,
): { memory: M; event?: AutotuneEvent } {
  if (isActive(marked.autotune)) return { memory: marked };
  const event: AutotuneEvent = {
    kind: 'autotune-aborted',
    message: `autotune aborted: ${AUTOTUNE_INTERRUPTED}`,
    data: { reason: AUTOTUNE_INTERRUPTED, generation },
  };
  // The record of the run as it would have begun, ended at once: the status shows the side and
  // setpoint it was for. Where it could not begin now either, the refusal says both.
  const started = startLoopAutotune(input.spec, input.desired, input.observed, marked, input.options, nowMs);
  if (!started.ok || started.memory.autotune === undefined) {
    const reason = `${AUTOTUNE_INTERRUPTED} (${started.ok ? 'no run' : started.reason}): ask again`;
    return { memory: { ...marked, autotuneRefused: { generation, reason, atMs: nowMs } }, event };
  }
  const autotune = abortAutotune(started.memory.autotune, AUTOTUNE_INTERRUPTED, nowMs);
  return { memory: { ...marked, autotune }, event };
}
