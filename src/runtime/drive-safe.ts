import type { Logger } from 'pino';
import type { ActuatorDriver } from '../drivers/types.js';

/**
 * The one way homeostat drives actuators to their safe state outside a cycle: a loop that
 * stops, the finalizer of a removed loop, a driver replaced or left without a loop on reload.
 * Every path logs the same lines, records the same event and follows the same error policy.
 */

/** One actuator to drive safe. */
export interface SafeTarget {
  /** Actuator id, for logs and the event. */
  id: string;
  /** The level it is safe at (0 off unless configured otherwise). */
  safeLevel: number;
  /** Its driver; undefined counts as a failure ("no driver"): it is not confirmed safe. */
  driver: Pick<ActuatorDriver, 'write'> | undefined;
}

/** What one call did; every target is in exactly one of the two lists. */
export interface SafeOutcome {
  reason: string;
  /** Actuators whose safe-level write went through. */
  safe: string[];
  /** Actuators not confirmed safe, with why (`write` rejected, or no driver). */
  failed: Array<{ id: string; error: string }>;
}

/** The event a call records: one per call, whatever the number of actuators. */
export interface SafeStateEvent {
  kind: string;
  source?: string;
  loop?: string;
  message: string;
  data: { reason: string; safe: string[]; failed: Array<{ id: string; error: string }> };
}

export interface DriveSafeOptions {
  /** Why: shown in every log line (`heater → safe state (SIGTERM)`) and in the event. */
  reason: string;
  /** A loop's actuators: a logger bound to the loop (its `loop` field), which the lines carry. */
  logger: Logger;
  /** The loop the actuators belong to, if one: in the event. */
  loop?: string;
  /**
   * Records the call's one event (the store's event log). A failure to record it is logged and
   * swallowed: bookkeeping never stands between an actuator and its safe state.
   */
  recordEvent?: (event: SafeStateEvent) => void;
  /** Kind of that event; default 'actuators-safe'. */
  eventKind?: string;
  /** Source of that event (who asked: 'file', 'shutdown'…). */
  eventSource?: string;
}

/**
 * Writes every target's safe level, all at once: a slow or unreachable device (an MQTT plug
 * waiting out its publish timeout) never delays another (a GPIO heater) on its way to safety.
 * Never throws: a failed write is logged at error, once, and returned in `failed`; the others
 * go on. Resolves when every write has settled (a write that hangs for ever is the driver's
 * defect: MQTT drivers time their publishes out).
 */
export async function driveSafe(
  targets: readonly SafeTarget[],
  opts: DriveSafeOptions,
): Promise<SafeOutcome> {
  const { reason, logger } = opts;
  const settled = await Promise.all(
    targets.map(async ({ id, safeLevel, driver }) => {
      try {
        if (!driver) throw new Error(`no driver for actuator "${id}"`);
        await driver.write(safeLevel);
        // Not `level`: pino reads that key as the log level.
        logger.info({ actuator: id, to: safeLevel }, `${id} → safe state (${reason})`);
        return { id };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.error({ err: error, actuator: id }, `${id}: not confirmed safe (${reason}): ${message}`);
        return { id, error: message };
      }
    }),
  );
  const outcome: SafeOutcome = {
    reason,
    safe: settled.filter((s) => s.error === undefined).map((s) => s.id),
    failed: settled.flatMap((s) => (s.error === undefined ? [] : [{ id: s.id, error: s.error }])),
  };
  recordOnce(outcome, opts);
  return outcome;
}

/** One line a person reads in the event log: what is safe, what is not and why. */
export function describeSafeOutcome(outcome: SafeOutcome): string {
  const parts: string[] = [];
  if (outcome.safe.length > 0) parts.push(`${outcome.safe.join(', ')} at their safe state`);
  for (const { id, error } of outcome.failed) parts.push(`${id} not confirmed safe (${error})`);
  if (parts.length === 0) parts.push('no actuators');
  return `${outcome.reason}: ${parts.join('; ')}`;
}

function recordOnce(outcome: SafeOutcome, opts: DriveSafeOptions): void {
  if (!opts.recordEvent) return;
  try {
    opts.recordEvent({
      kind: opts.eventKind ?? 'actuators-safe',
      ...(opts.eventSource === undefined ? {} : { source: opts.eventSource }),
      ...(opts.loop === undefined ? {} : { loop: opts.loop }),
      message: describeSafeOutcome(outcome),
      data: { reason: outcome.reason, safe: outcome.safe, failed: outcome.failed },
    });
  } catch (error) {
    opts.logger.warn({ err: error }, `safe state reached; its event could not be recorded`);
  }
}
