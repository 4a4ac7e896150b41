import { isActive } from '../core/tuning/autotune.js';
import type { AutotuneCommand } from './desired-changes.js';
import type { LoopDesiredRow } from './desired-records.js';
import { type AutotuneRequest, checkedAutotuneOptions, TuningError } from './tuning-records.js';

/**
 * What DesiredStore.requestAutotune decides before it stores a request: whether the command is
 * well formed, and whether it only repeats the request already stored.
 */

/** Throws TuningError for an action other than start or cancel, or a time that is not finite. */
export function assertAutotuneCommand(loop: string, request: AutotuneCommand): void {
  const { action, requestedAtMs } = request;
  if (action !== 'start' && action !== 'cancel')
    throw new TuningError(
      `loop "${loop}": autotune action must be "start" or "cancel", got ${String(action)}`,
    );
  if (!Number.isFinite(requestedAtMs))
    throw new TuningError(
      `loop "${loop}": autotune request time must be a finite number, got ${requestedAtMs}`,
    );
}

/** How close to the stored start request a same start counts as its duplicate, ms. */
export const DUPLICATE_START_WINDOW_MS = 30_000;

/**
 * Whether `request` repeats the stored start request (a QoS 1 redelivery, a second press of the
 * button): a start with the same options, received within DUPLICATE_START_WINDOW_MS of it, while
 * that one is still to come (the loop has not acted on it) or its run is going. Stored again,
 * it would get a generation of its own and the loop would refuse it ("already running"). A
 * start after the stored one was refused or its run ended is a new request. `memory`: the loop's
 * memory as stored (a loop acting on a request writes it at once).
 */
export function duplicateStart(
  loop: string,
  request: AutotuneCommand,
  row: LoopDesiredRow,
  memory: unknown,
): boolean {
  const stored: AutotuneRequest | undefined = row.autotuneRequest;
  if (request.action !== 'start' || stored?.action !== 'start' || stored.optionsUnreadable) return false;
  if (Math.abs(request.requestedAtMs - stored.atMs) > DUPLICATE_START_WINDOW_MS) return false;
  if (checkedAutotuneOptions(loop, request.options ?? {}) !== checkedAutotuneOptions(loop, stored.options))
    return false;
  const marks = (memory ?? {}) as {
    autotuneRequestGeneration?: unknown;
    autotuneRefused?: { generation?: unknown };
    autotune?: Parameters<typeof isActive>[0];
  };
  if (marks.autotuneRequestGeneration !== stored.generation) return true;
  return marks.autotuneRefused?.generation !== stored.generation && isActive(marks.autotune);
}
