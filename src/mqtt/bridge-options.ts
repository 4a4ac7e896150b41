import type { Logger } from 'pino';
import type { ChangeLimit } from '../control/change-limiter.js';
import type { DesiredCommands } from '../control/desired-commands.js';
import type { LoopControl } from '../control/loop-control.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { Clock } from '../time/clock.js';
import type { MqttConnection } from './client.js';
import type { Topics } from './topics.js';

/** The part of the MQTT connection the bridge uses (tests pass a fake). */
export type BridgeConnection = Pick<
  MqttConnection,
  'start' | 'stop' | 'onConnect' | 'publish' | 'subscribe' | 'connected'
> &
  Partial<Pick<MqttConnection, 'throttleReceive'>>;

/** What the bridge (and the command path) asks of the daemon: see control/loop-control.ts. */
export type { LoopControl };

export interface MqttBridgeOptions {
  connection: BridgeConnection;
  topics: Topics;
  /** The daemon, as far as the bridge reads and drives it. */
  control: LoopControl;
  /** Where accepted commands are stored (committed before the result is published). */
  desired: DesiredStore;
  clock: Clock;
  /**
   * Times the guards against people and networks (the Home Assistant birth debounce, and the
   * bridge's own command path's change limit and rejection log): real time even when `clock` is
   * scaled (`--speed`). Default: `clock`.
   */
  guardClock?: Clock;
  logger: Logger;
  /** homeostat's version, for Home Assistant's device and origin blocks. */
  version: string;
  /** An unchanged state is republished this often, ms (heartbeat: the config's mqtt.heartbeatS). */
  heartbeatMs: number;
  /**
   * Changes of desired state a loop accepts from MQTT; default 10 at once, 30 per minute.
   * Only for the bridge's own command path (without `commands`).
   */
  changeLimit?: ChangeLimit;
  /**
   * The command path shared with the other transports (the node passes one, so MQTT and HTTP
   * share each loop's change budget and rejection log). Its owner stops it. Without it the
   * bridge builds its own (from `control`, `desired`, `clock`, `logger`, `changeLimit`) and
   * stops it with the bridge.
   */
  commands?: DesiredCommands;
  /**
   * Commands waiting to be handled, at most; more are dropped unread and answered by one
   * coalesced "busy" rejection per loop per second. Default 1000.
   */
  maxQueuedCommands?: number;
  /** How the command queue yields between slices; default setImmediate. Tests pass `fn => fn()`. */
  schedule?: (fn: () => void) => void;
}
