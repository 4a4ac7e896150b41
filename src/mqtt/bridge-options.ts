import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { Clock } from '../runtime/clock.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { ChangeLimit } from './change-limiter.js';
import type { MqttConnection } from './client.js';
import type { FaultResetOutcome } from './commands.js';
import type { Topics } from './topics.js';

/** The part of the MQTT connection the bridge uses (tests pass a fake). */
export type BridgeConnection = Pick<
  MqttConnection,
  'start' | 'stop' | 'onConnect' | 'publish' | 'subscribe' | 'connected'
> &
  Partial<Pick<MqttConnection, 'throttleReceive'>>;

export interface MqttBridgeOptions {
  connection: BridgeConnection;
  topics: Topics;
  /** The daemon, as far as the bridge reads and drives it. */
  control: LoopControl;
  /** Where accepted commands are stored (committed before the result is published). */
  desired: DesiredStore;
  clock: Clock;
  logger: Logger;
  /** homeostat's version, for Home Assistant's device and origin blocks. */
  version: string;
  /** An unchanged state is republished this often, ms (heartbeat: the config's mqtt.heartbeatS). */
  heartbeatMs: number;
  /** Changes of desired state a loop accepts from MQTT; default 10 at once, 30 per minute. */
  changeLimit?: ChangeLimit;
  /**
   * Commands waiting to be handled, at most; more are dropped unread and answered by one
   * coalesced "busy" rejection per loop per second. Default 1000.
   */
  maxQueuedCommands?: number;
  /** How the command queue yields between slices; default setImmediate. Tests pass `fn => fn()`. */
  schedule?: (fn: () => void) => void;
}

/**
 * What the bridge asks of the daemon (the Daemon implements it; unit tests pass a fake). The
 * daemon tells the bridge its statuses and applied configs through its event sink: neither
 * holds a lazy reference to the other.
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
