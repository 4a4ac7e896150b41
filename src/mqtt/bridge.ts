import { DesiredCommands } from '../control/desired-commands.js';
import type { LoopStatus } from '../core/status.js';
import { BusyReporter } from './bridge-busy.js';
import { CommandHandler, errorMessage, type ReceivedCommand } from './bridge-commands.js';
import { BirthDebounce, birthTopic, DiscoveryReconciler, isBirthMessage } from './bridge-discovery.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import { BridgePublisher } from './bridge-publish.js';
import { StatusPublisher } from './bridge-status.js';
import { CommandQueue, DEFAULT_MAX_QUEUED_COMMANDS } from './command-queue.js';

export { BUSY_REPORT_MS } from './bridge-busy.js';
export { CHANGE_BURST, REJECTION_WINDOW_MS, RETAINED_REASON } from './bridge-commands.js';
export { BIRTH_MIN_INTERVAL_MS, BIRTH_QUIET_MS } from './bridge-discovery.js';
export type { LoopControl, MqttBridgeOptions } from './bridge-options.js';

/**
 * Connects the daemon to MQTT: commands in, status and Home Assistant discovery out.
 * Regulation never depends on it: offline, publishes are dropped (the state is republished
 * on every reconnect) and loops keep running from the store.
 *
 * A coordinator: the command path (bridge-commands, bridge-busy), discovery and Home
 * Assistant's birth (bridge-discovery) and loop states with their heartbeat (bridge-status)
 * each live in their own module; this class wires them to the connection and the daemon.
 */
export class MqttBridge {
  /** The command path: the node's shared one, or the bridge's own (then `ownsCommands`). */
  private readonly desiredCommands: DesiredCommands;
  private readonly ownsCommands: boolean;
  private readonly status: StatusPublisher;
  private readonly discovery: DiscoveryReconciler;
  private readonly birth: BirthDebounce;
  private readonly handler: CommandHandler;
  private readonly busy: BusyReporter;
  private readonly commands: CommandQueue<ReceivedCommand>;

  constructor(private readonly opts: MqttBridgeOptions) {
    this.ownsCommands = opts.commands === undefined;
    this.desiredCommands = opts.commands ?? new DesiredCommands(opts);
    // One guard for every store call of the bridge and its commands: a failing store is
    // logged once per streak.
    const { storage, rejections } = this.desiredCommands;
    const output = new BridgePublisher(opts.connection, opts.logger, opts.topics);
    this.status = new StatusPublisher(opts, output);
    this.discovery = new DiscoveryReconciler(opts, {
      storage,
      output,
      forgetState: (loop) => this.status.forget(loop),
    });
    this.birth = new BirthDebounce(opts.guardClock ?? opts.clock, () =>
      this.republishAll('Home Assistant online'),
    );
    this.handler = new CommandHandler(opts, { commands: this.desiredCommands, output });
    this.busy = new BusyReporter(opts, rejections, output);
    this.commands = new CommandQueue<ReceivedCommand>({
      handle: (command) => this.handler.handle(command),
      overflow: (command) => this.busy.dropped(command.topic),
      onError: (error) =>
        opts.logger.error(
          { err: errorMessage(error) },
          'MQTT command handler failed; the next command is handled',
        ),
      maxQueued: opts.maxQueuedCommands ?? DEFAULT_MAX_QUEUED_COMMANDS,
      ...(opts.schedule ? { schedule: opts.schedule } : {}),
    });
  }

  /** Resolves once every received command has been handled (for tests and benchmarks). */
  commandsHandled(): Promise<void> {
    return this.commands.idle();
  }

  /** Subscriptions first (queued commands arrive right after connecting), then connect. */
  start(): void {
    const { connection, topics } = this.opts;
    for (const filter of topics.commandSubscription) {
      connection.subscribe(filter, 1, (topic, payload, packet) =>
        this.commands.push({
          topic,
          payload,
          retain: packet?.retain === true,
          receivedAtMs: this.opts.clock.nowMs(),
        }),
      );
    }
    connection.subscribe(birthTopic(this.opts.control.currentConfig()), 1, (_topic, payload) => {
      // Home Assistant's birth message: it lost its state, republish everything.
      if (isBirthMessage(payload)) this.birth.onBirth();
    });
    connection.onConnect(() => this.republishAll('connected'));
    // A command flood waits at the broker while our queue is long (backpressure).
    connection.throttleReceive?.((resume) => this.commands.whenRoom(resume));
    connection.start();
    this.status.startHeartbeat();
  }

  async stop(): Promise<void> {
    this.status.stopHeartbeat();
    this.birth.stop();
    this.busy.stop();
    if (this.ownsCommands) this.desiredCommands.stop();
    await this.opts.connection.stop();
  }

  /** A loop's new status: published when it changed, else at the heartbeat. */
  publishStatus(status: LoopStatus, force = false): void {
    this.status.publish(status, force);
  }

  /**
   * The config changed (reload): discovery and the retained states are reconciled — only what
   * changed is published, and a removed loop's entities and state are cleared (the MQTT part
   * of its finalizer).
   */
  configChanged(_removedLoops: string[]): void {
    this.desiredCommands.retainLoops(Object.keys(this.opts.control.currentConfig().loops));
    this.discovery.reconcile();
  }

  private republishAll(why: string): void {
    this.opts.logger.info(`MQTT: ${why}: publishing discovery and every loop's state`);
    this.discovery.forgetDiscovery();
    this.discovery.reconcile();
    this.status.publishAll(true);
  }
}
