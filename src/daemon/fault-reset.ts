import type { Logger } from 'pino';
import { type FaultResetOutcome, NOTHING_LATCHED_REASON } from '../control/commands.js';
import type { RunningLoop } from './loop-factory.js';
import type { DaemonStore } from './store.js';

/** A person's fault reset as it arrived (MQTT fault/reset, the Home Assistant button). */
export interface FaultResetRequest {
  loopId: string;
  source: string;
  /** Clock time the reset was received, ms. */
  requestedAtMs: number;
}

/**
 * Commits a fault reset as desired state (see Daemon.requestFaultReset): refused, changing
 * nothing, when the loop is unknown, no fault latched at or before the request, or the
 * database cannot take it; accepted with the generation it was stored as, and the loop woken.
 */
export function requestFaultReset(
  loop: RunningLoop | undefined,
  request: FaultResetRequest,
  store: DaemonStore,
  logger: Logger,
): FaultResetOutcome {
  const { loopId, source, requestedAtMs } = request;
  if (!loop) return { accepted: false, reason: `unknown loop "${loopId}"` };
  const current = loop.cycle.status?.generation;
  const unchanged = current === undefined ? {} : { generation: current };
  const fault = loop.cycle.latchedFaultAt(requestedAtMs);
  if (!fault) return { accepted: false, reason: NOTHING_LATCHED_REASON, ...unchanged };
  let generation: number;
  try {
    ({ generation } = store.desired.resetFault(loopId, {
      requestedAtMs,
      source,
      fault: fault.reason,
    }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warn({ err: error, loop: loopId }, `fault reset not stored: ${message}`);
    return { accepted: false, reason: `not stored: ${message}`, ...unchanged };
  }
  loop.cycle.resetCommitted(generation);
  loop.runner.trigger('fault reset');
  return { accepted: true, generation };
}
