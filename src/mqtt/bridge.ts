import type { Logger } from 'pino';
import { allowedModes, type Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { Clock, TimerHandle } from '../runtime/clock.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { MqttConnection } from './client.js';
import { type CommandOutcome, parseCommand, resultPayload } from './commands.js';
import { discoveryDiff, discoveryPayload, discoveryTopic, homeAssistantStatusTopic } from './discovery.js';
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
  /** Resets a loop's fault latched at or before `requestedAtMs`; true when one was cleared. */
  resetFault?: (loop: string, requestedAtMs: number) => boolean;
  clock: Clock;
  logger: Logger;
  /** homeostat's version, for Home Assistant's device and origin blocks. */
  version: string;
  /** An unchanged state is republished this often, ms (heartbeat). Default 60 000. */
  heartbeatMs?: number;
}

/** What this node last published, by loop and discovery component (kept in the database). */
interface PublishedRecord {
  loops: string[];
  /** Component unique id → platform. */
  components: Record<string, string>;
}

const PUBLISHED_KEY = 'mqttPublished';

/**
 * Connects the daemon to MQTT: commands in, status and Home Assistant discovery out.
 * Regulation never depends on it: offline, publishes are dropped (the state is republished
 * on every reconnect) and loops keep running from the store.
 */
export class MqttBridge {
  private readonly lastState = new Map<string, { fingerprint: string; atMs: number }>();
  private discovery: Map<string, string> | undefined;
  private published: PublishedRecord | undefined;
  private reconcileSequence = 0;
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
   * The config changed (reload): discovery and the retained states are reconciled — only what
   * changed is published, and a removed loop's entities and state are cleared (the MQTT part
   * of its finalizer).
   */
  configChanged(_removedLoops: string[]): void {
    this.reconcilePublished();
  }

  private republishAll(why: string): void {
    this.opts.logger.info(`MQTT: ${why}: publishing discovery and every loop's state`);
    this.discovery = undefined;
    this.reconcilePublished();
    for (const status of this.opts.statuses()) this.publishStatus(status, true);
  }

  /**
   * Makes the broker match the config: discovery (a removed component first gets HA's removal
   * marker) and retained loop states (a removed loop's is cleared). What was published is
   * remembered in the database, so a loop removed while offline or while the daemon was
   * stopped is still cleared at the next connection. Level-based, like the loops.
   */
  private reconcilePublished(): void {
    if (!this.opts.connection.connected) return;
    const config = this.opts.config();
    // What this process published (or is publishing) wins over the database, which is only
    // written once the publishes went through: two reconciles in quick succession see each other.
    const record = this.published ?? this.loadRecord();
    const loops = Object.keys(config.loops);
    const removedLoops = record.loops.filter((loop) => !loops.includes(loop));

    const mqtt = config.mqtt;
    const prefix = mqtt?.discovery.prefix ?? 'homeassistant';
    const next =
      mqtt?.discovery.enabled === false
        ? []
        : [
            discoveryPayload(config, {
              prefix,
              baseTopic: mqtt?.baseTopic ?? 'homeostat',
              version: this.opts.version,
            }),
          ];
    // Not published in this process yet: start from what the database says was published, so
    // removal markers go out for components that are gone.
    const previous =
      this.discovery ??
      this.previousDiscovery(record, next[0]?.topic ?? discoveryTopic(prefix, config.node.id));
    const diff = discoveryDiff(previous, next);
    const sends = [
      ...diff.publishes.map((message) => this.publish(message.topic, message.payload, true)),
      ...removedLoops.map((loop) => this.publish(this.opts.topics.loopState(loop), '', true)),
    ];
    for (const loop of removedLoops) this.lastState.delete(loop);
    this.discovery = diff.published;
    const components = Object.fromEntries(
      Object.entries(next[0]?.payload.cmps ?? {}).map(([id, component]) => [id, component.p]),
    );
    const published = { loops, components };
    this.published = published;
    const sequence = ++this.reconcileSequence;
    // Remember it durably only once every publish went out; otherwise forget it, so the next
    // connection reconciles from the database again. A newer reconcile supersedes this one.
    void Promise.all(sends).then((ok) => {
      if (sequence !== this.reconcileSequence) return;
      if (ok.every(Boolean)) this.saveRecord(published);
      else this.published = undefined;
    });
  }

  private previousDiscovery(record: PublishedRecord, topic: string): Map<string, string> | undefined {
    if (Object.keys(record.components).length === 0) return undefined;
    const cmps = Object.fromEntries(Object.entries(record.components).map(([id, p]) => [id, { p }]));
    return new Map([[topic, JSON.stringify({ cmps })]]);
  }

  private loadRecord(): PublishedRecord {
    const text = this.opts.desired.getMeta(PUBLISHED_KEY);
    if (!text) return { loops: [], components: {} };
    try {
      const parsed = JSON.parse(text) as Partial<PublishedRecord>;
      return { loops: parsed.loops ?? [], components: parsed.components ?? {} };
    } catch {
      return { loops: [], components: {} };
    }
  }

  private saveRecord(record: PublishedRecord): void {
    const text = JSON.stringify(record);
    if (this.opts.desired.getMeta(PUBLISHED_KEY) === text) return;
    try {
      this.opts.desired.setMeta(PUBLISHED_KEY, text);
    } catch (error) {
      this.opts.logger.warn({ err: error }, 'could not remember what MQTT published; will reconcile again');
    }
  }

  /** One command: validated, stored (committed) before its result is published, never clamped. */
  private onCommand(topic: string, payload: Buffer): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    const { loop, kind } = command;
    const atIso = new Date(this.opts.clock.nowMs()).toISOString();
    const loopConfig = this.opts.config().loops[loop];
    if (!loopConfig) {
      const reason = `unknown loop "${loop}"`;
      this.opts.desired.recordEvent({ kind: 'command-rejected', source: 'mqtt', message: reason });
      this.publishResult(loop, { accepted: false, reason }, atIso);
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
    const { setpoint, mode, faultReset } = outcome.change;
    if (faultReset) this.opts.resetFault?.(loop, this.opts.clock.nowMs());
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

  /** Resolves true once the broker has it, false when dropped (offline: the next connect redoes it). */
  private publish(topic: string, payload: string, retain: boolean): Promise<boolean> {
    return this.opts.connection.publish(topic, payload, { qos: 1, retain }).then(
      () => true,
      (error) => {
        this.opts.logger.debug({ err: error, topic }, 'MQTT publish dropped');
        return false;
      },
    );
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
