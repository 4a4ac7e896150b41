import type { Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { FaultResetOutcome } from './commands.js';

/**
 * What the command path (DesiredCommands) and the MQTT bridge ask of the daemon (the Daemon
 * implements it; unit tests pass a fake). The daemon tells the bridge its statuses and applied
 * configs through its event sink: neither holds a lazy reference to the other.
 */
export interface LoopControl {
  /** The config in force (it changes on reload). */
  currentConfig(): Config;
  /** Every loop's latest status, for republishing after a (re)connect. */
  statuses(): LoopStatus[];
  /** Asks a loop for a cycle now (a command changed its desired state); unknown loops are ignored. */
  triggerLoop(loop: string, reason: string): void;
  /**
   * Resets the loop's fault latched at or before `requestedAtMs` (clock time the reset was
   * received), recorded as coming from `source`: accepted once committed as desired state (with
   * its generation), or refused with why (nothing latched, not stored).
   */
  requestFaultReset(loop: string, source: string, requestedAtMs: number): FaultResetOutcome;
}
