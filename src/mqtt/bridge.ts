import type { Logger } from 'pino';
import { allowedModes, type Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { Clock, TimerHandle } from '../runtime/clock.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { MqttConnection } from './client.js';
import { type CommandOutcome, parseCommand, resultPayload } from './commands.js';
import { discoveryDiff, discoveryPayload, homeAssistantStatusTopic } from './discovery.js';
import { stateFingerprint, statePayload } from './state-payload.js';
import type { CommandKind, Topics } from './topics.js';

export interface MqttBridgeOptions {
  connection: Pick<MqttConnection, 'start' | 'stop' | 'onConnect' | 'publish' | 'subscribe' | 'connected'>;
  topics: Topics;
  /** The config in force (it changes on reload). */
  config: () => Config;
  /** Where accepted commands are stored (committed before the result is published). */
  desired: DesiredStore;
  /** Every loop's latest status, for republishing after a (re)connect. */
  statuses: () => LoopStatus[];
  /** Asks a loop for a cycle now (a command changed its desired state). */
  triggerLoop: (loop: string, reason: string) => void;
  clock: Clock;
  logger: Logger;
  /** homeostat's version, for Home Assistant's device and origin blocks. */
  version: string;
  /** An unchanged state is republished this often, ms (heartbeat). Default 60 000. */
  heartbeatMs?: number;
}

/**
 * Connects the daemon to MQTT: commands in, status and Home Assistant discovery out.
 * Regulation never depends on it: offline, publishes are dropped (the state is republished
 * on every reconnect) and loops keep running from the store.
 */
export class MqttBridge {
  private readonly lastState = new Map<string, { fingerprint: string; atMs: number }>();
  private discovery: Map<string, string> | undefined;
  private heartbeatTimer: TimerHandle | undefined;

  constructor(private readonly opts: MqttBridgeOptions) {}

  /** Subscriptions first (queued commands arrive right after connecting), then connect. */
  start(): void {
    const { connection, topics } = this.opts;
    for (const filter of topics.commandSubscription) {
      connection.subscribe(filter, 1, (topic, payload) => this.onCommand(topic, payload));
    }
    const prefix = this.opts.config().mqtt?.discovery.prefix ?? 'homeassistant';
    connection.subscribe(homeAssistantStatusTopic(prefix), 1, (_topic, payload) => {
      // Home Assistant's birth message: it lost its state, republish everything.
      if (payload.toString('utf8').trim() === 'online') this.republishAll('Home Assistant online');
    });
    connection.onConnect(() => this.republishAll('connected'));
    connection.start();
    this.scheduleHeartbeat();
  }

  async stop(): Promise<void> {
    if (this.heartbeatTimer) this.opts.clock.clearTimer(this.heartbeatTimer);
    await this.opts.connection.stop();
  }

  /** A loop's new status: published when it changed, else at the heartbeat. */
  publishStatus(status: LoopStatus, force = false): void {
    const payload = statePayload(status);
    const fingerprint = stateFingerprint(payload);
    const nowMs = this.opts.clock.nowMs();
    const last = this.lastState.get(status.loop);
    const heartbeatMs = this.opts.heartbeatMs ?? 60_000;
    if (!force && last && last.fingerprint === fingerprint && nowMs - last.atMs < heartbeatMs) return;
    if (!this.opts.connection.connected) return;
    this.lastState.set(status.loop, { fingerprint, atMs: nowMs });
    this.publish(this.opts.topics.loopState(status.loop), JSON.stringify(payload), true);
  }

  /**
   * The config changed (reload): discovery is reconciled (only what changed), and the retained
   * state of removed loops is cleared — the MQTT part of their finalizer.
   */
  configChanged(removedLoops: string[]): void {
    for (const loop of removedLoops) {
      this.lastState.delete(loop);
      this.publish(this.opts.topics.loopState(loop), '', true);
    }
    this.reconcileDiscovery();
  }

  private republishAll(why: string): void {
    this.opts.logger.info(`MQTT: ${why}: publishing discovery and every loop's state`);
    this.discovery = undefined;
    this.reconcileDiscovery();
    for (const status of this.opts.statuses()) this.publishStatus(status, true);
  }

  private reconcileDiscovery(): void {
    const config = this.opts.config();
    const mqtt = config.mqtt;
    if (!this.opts.connection.connected) return;
    const next =
      mqtt?.discovery.enabled === false
        ? []
        : [
            discoveryPayload(config, {
              prefix: mqtt?.discovery.prefix ?? 'homeassistant',
              baseTopic: mqtt?.baseTopic ?? 'homeostat',
              version: this.opts.version,
            }),
          ];
    const diff = discoveryDiff(this.discovery, next);
    for (const message of diff.publishes) this.publish(message.topic, message.payload, true);
    this.discovery = diff.published;
  }

  /** One command: validated, stored (committed) before its result is published, never clamped. */
  private onCommand(topic: string, payload: Buffer): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    const { loop, kind } = command;
    const atIso = new Date(this.opts.clock.nowMs()).toISOString();
    const loopConfig = this.opts.config().loops[loop];
    if (!loopConfig) {
      this.publishResult(loop, { accepted: false, reason: `unknown loop "${loop}"` }, atIso);
      return;
    }
    const outcome = parseCommand(kind, payload, {
      limits: loopConfig.limits,
      modes: allowedModes(loopConfig),
      step: loopConfig.step,
    });
    const current = this.opts.desired.desired(loop)?.generation;
    if (!outcome.accepted) {
      this.opts.desired.recordEvent({
        loop,
        kind: 'command-rejected',
        source: 'mqtt',
        message: `${kindName(kind)} rejected: ${outcome.reason}`,
        ...(outcome.requestId ? { data: { requestId: outcome.requestId } } : {}),
      });
      this.publishResult(loop, outcome, atIso, current);
      return;
    }
    const { setpoint, mode } = outcome.change;
    let generation = current;
    if (setpoint !== undefined || mode !== undefined) {
      try {
        const stored = this.opts.desired.setDesired(
          loop,
          { ...(setpoint === undefined ? {} : { setpoint }), ...(mode === undefined ? {} : { mode }) },
          'mqtt',
          outcome.requestId,
        );
        generation = stored.generation;
      } catch (error) {
        const reason = `not stored: ${error instanceof Error ? error.message : String(error)}`;
        this.publishResult(loop, { accepted: false, reason, ...pickRequestId(outcome) }, atIso, current);
        return;
      }
    }
    this.publishResult(loop, outcome, atIso, generation);
    this.opts.triggerLoop(loop, `mqtt ${kindName(kind)}`);
  }

  private publishResult(loop: string, outcome: CommandOutcome, atIso: string, generation?: number): void {
    const payload = resultPayload({
      ...outcome,
      loop,
      atIso,
      ...(generation === undefined ? {} : { generation }),
    });
    this.publish(this.opts.topics.loopResult(loop), payload, false);
  }

  private publish(topic: string, payload: string, retain: boolean): void {
    this.opts.connection.publish(topic, payload, { qos: 1, retain }).catch((error) => {
      // Offline or timed out: the next (re)connect republishes states and discovery.
      this.opts.logger.debug({ err: error, topic }, 'MQTT publish dropped');
    });
  }

  private scheduleHeartbeat(): void {
    const everyMs = this.opts.heartbeatMs ?? 60_000;
    const tick = () => {
      for (const status of this.opts.statuses()) this.publishStatus(status);
      this.heartbeatTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.heartbeatTimer = this.opts.clock.setTimer(tick, everyMs);
  }
}

function kindName(kind: CommandKind): string {
  return { setpoint: 'setpoint', mode: 'mode', json: 'set', faultReset: 'fault reset' }[kind];
}

function pickRequestId(outcome: { requestId?: string }): { requestId?: string } {
  return outcome.requestId === undefined ? {} : { requestId: outcome.requestId };
}
