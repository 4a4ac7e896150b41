/**
 * The node's alerts: the channels the config names (secrets read once, at start) plus MQTT's
 * `<baseTopic>/<node.id>/alerts` when there is a broker, the outbox in the database, the
 * dispatcher and the monitor fed by every loop status. The AlertsDelivering condition (only
 * when the config names channels) says whether they deliver. Channels keep their settings until
 * a restart; the rules follow every reload.
 */
import type { Logger } from 'pino';
import type { BrewfatherStreams } from '../alerts/brewfather-streams.js';
import { buildChannel } from '../alerts/channels/index.js';
import { type AlertChannel, mqttChannel } from '../alerts/channels/services.js';
import { AlertDispatcher } from '../alerts/dispatcher.js';
import { AlertMonitor, MQTT_CHANNEL } from '../alerts/monitor.js';
import { type AlertNotice, testNotice } from '../alerts/notice.js';
import { AlertOutbox } from '../alerts/outbox.js';
import { sendUntilAborted } from '../alerts/send.js';
import { type Config, mqttOf } from '../config/schema.js';
import type { Daemon } from '../daemon/daemon.js';
import type { AlertChannelFigures } from '../http/alert-metrics.js';
import type { RecentAlerts } from '../http/api-deps.js';
import type { MqttConnection } from '../mqtt/client.js';
import type { AlertTestResponse } from '../operations/alert-schemas.js';
import { AlertOutboxTable } from '../store/alert-outbox.js';
import type { StoreSupervisor } from '../store/supervisor.js';
import type { Clock } from '../time/clock.js';
import { buildBrewfatherStreams } from './brewfather-wiring.js';

/** How long a test alert may take per channel, ms: within the CLI's 5 s for an answer. */
const TEST_TIMEOUT_MS = 4_000;

/** One send bounded by `timeoutMs`: the error's message, or undefined when it was taken. */
async function sendOnce(
  channel: AlertChannel,
  notice: AlertNotice,
  timeoutMs: number,
): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer in ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  try {
    await sendUntilAborted(channel, notice, controller.signal);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/** What a watched node's availability message says is wrong; undefined for `online`. */
function availabilityProblem(payload: Buffer): string | undefined {
  const text = payload.toString('utf8').trim();
  if (text === 'online') return undefined;
  if (text === 'offline') return 'offline: it stopped, died, lost power or its network (its last will)';
  if (text === '') return 'its availability was cleared';
  return `its availability says "${text.slice(0, 40)}"`;
}

/** The loops' Brewfather blocks, to tell a change (JSON). */
const streamsOf = (config: Config) =>
  JSON.stringify(Object.entries(config.loops).map(([loop, section]) => [loop, section.brewfather ?? null]));

export interface NodeAlertsOptions {
  config: Config;
  store: StoreSupervisor;
  daemon: Daemon;
  clock: Clock;
  /**
   * Times delivery's timeouts and retries: real time when `clock` is scaled (`--speed`), so a
   * server gets its 15 s to answer in the simulation as on a real node.
   */
  deliveryClock: Pick<Clock, 'setTimer' | 'clearTimer'>;
  logger: Logger;
  /** The node's connection and its topics' base (`<baseTopic>/<node.id>`), when it has a broker. */
  mqtt?: { connection: MqttConnection; base: string } | undefined;
}

export class NodeAlerts {
  readonly outbox: AlertOutbox;
  readonly dispatcher: AlertDispatcher;
  readonly monitor: AlertMonitor;
  /** Each configured channel's last error (undefined: delivering), for the condition. */
  readonly #errors = new Map<string, string | undefined>();
  readonly #configured: string[];
  readonly #channels: ReadonlyMap<string, AlertChannel>;
  /** Channels built broken: their secret file could not be read. */
  readonly #unreadable = new Set<string>();
  /** The loops' Brewfather streams (readings, not alerts: posted on their own cadence). */
  readonly #streams: BrewfatherStreams | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(private readonly opts: NodeAlertsOptions) {
    const { config, logger } = opts;
    const channels = new Map<string, AlertChannel>();
    for (const [id, channelConfig] of Object.entries(config.alerts.channels)) {
      const built = buildChannel(id, channelConfig);
      channels.set(id, built.channel);
      this.#errors.set(id, built.problem);
      if (built.problem) this.#unreadable.add(id);
      if (built.problem) logger.error(`alerts: ${built.problem}; alerts for ${id} wait in the outbox`);
    }
    this.#configured = [...channels.keys()];
    const mqtt = opts.mqtt;
    if (mqtt) {
      const publish = (topic: string, payload: string) =>
        mqtt.connection.publish(topic, payload, { qos: 1, retain: false });
      channels.set(MQTT_CHANNEL, mqttChannel(`${mqtt.base}/alerts`, publish));
    }
    this.#channels = channels;
    const alertsLogger = logger.child({ component: 'alerts' });
    this.outbox = new AlertOutbox(
      new AlertOutboxTable(() => opts.store.database),
      config.alerts.outboxLimit,
      alertsLogger,
    );
    this.dispatcher = new AlertDispatcher({
      outbox: this.outbox,
      channels,
      clock: {
        nowMs: () => opts.clock.nowMs(),
        setTimer: (fn, delayMs) => opts.deliveryClock.setTimer(fn, delayMs),
        clearTimer: (handle) => opts.deliveryClock.clearTimer(handle),
      },
      logger: alertsLogger,
      onAttempt: (channel, error) => this.#noteAttempt(channel, error),
    });
    this.#streams = buildBrewfatherStreams(config, opts.daemon, opts.deliveryClock, alertsLogger);
    this.monitor = new AlertMonitor({
      config,
      clock: opts.clock,
      logger: alertsLogger,
      outbox: this.outbox,
      dispatcher: this.dispatcher,
      channels: [...channels.keys()],
    });
    mqtt?.connection.onConnect(() => this.dispatcher.retryNow(MQTT_CHANNEL));
  }

  /** Loads what the database holds undelivered, follows the loops' statuses, and delivers. */
  start(): void {
    const loaded = this.outbox.load([...this.#configured, ...(this.opts.mqtt ? [MQTT_CHANNEL] : [])]);
    if (loaded > 0)
      this.opts.logger.info(`alerts: ${loaded} undelivered from before the restart, delivering`);
    this.#unsubscribe = this.opts.daemon.subscribe({
      status: (status) => this.monitor.onStatus(status),
      configApplied: (config) => {
        this.monitor.applyConfig(config);
        if (JSON.stringify(config.alerts.channels) !== JSON.stringify(this.opts.config.alerts.channels)) {
          this.opts.logger.warn(
            'the alerts.channels block changed: channels keep their settings until the next restart',
          );
        }
        if (streamsOf(config) !== streamsOf(this.opts.config)) {
          this.opts.logger.warn(
            'a brewfather block changed: the streams keep their settings until the next restart',
          );
        }
      },
    });
    this.#watchPeers();
    this.#showHealth();
    this.dispatcher.kick();
    this.#streams?.start();
  }

  /**
   * Each watched node's availability (retained: the broker answers at once with the last one),
   * each peer first counted as not seen, so a node that never comes online is told too.
   */
  #watchPeers(): void {
    const { config, logger, mqtt } = this.opts;
    const peers = config.alerts.peers?.nodes ?? [];
    if (peers.length === 0) return;
    if (!mqtt) {
      logger.warn(`alerts.peers: no broker, so ${peers.join(', ')} cannot be watched`);
      return;
    }
    const root = mqttOf(config).baseTopic;
    const seen = new Map<string, string | undefined>();
    for (const peer of peers) {
      this.monitor.onPeer(peer, 'not seen online since this node started');
      mqtt.connection.subscribe(`${root}/${peer}/availability`, 1, (_topic, payload) => {
        const problem = availabilityProblem(payload);
        if (!seen.has(peer) || seen.get(peer) !== problem) {
          if (problem === undefined) logger.info(`alerts.peers: ${peer} is online`);
          else logger.warn(`alerts.peers: ${peer}: ${problem}`);
        }
        seen.set(peer, problem);
        this.monitor.onPeer(peer, problem);
      });
    }
  }

  /** The channels alerts go to (`mqtt` with a broker). */
  channels(): string[] {
    return [...this.#channels.keys()];
  }

  /**
   * A test alert through each channel (or `only`), sent at once and not through the outbox, so
   * the answer is what each channel said now (`homeostat alert test`).
   */
  async test(only: string | undefined): Promise<AlertTestResponse['results']> {
    const config = this.opts.config;
    const notice = testNotice(config.node.id, config.node.name, this.opts.clock.nowMs());
    const targets = [...this.#channels.values()].filter(
      (channel) => only === undefined || channel.id === only,
    );
    return Promise.all(
      targets.map(async (channel) => {
        const startedMs = performance.now();
        const error = await sendOnce(channel, notice, TEST_TIMEOUT_MS);
        return {
          channel: channel.id,
          type: channel.type,
          delivered: error === undefined,
          answer: error ?? 'delivered',
          tookMs: Math.round(performance.now() - startedMs),
        };
      }),
    );
  }

  /** Each channel's figures since the start, for /metrics and `homeostat status`. */
  figures(): AlertChannelFigures[] {
    const counts = this.dispatcher.counts();
    const backlog = this.outbox.backlog();
    const dropped = this.outbox.droppedSinceStart();
    const channels = Object.entries(counts).map(([channel, { sent, failed }]) => ({
      channel,
      sent,
      failed,
      dropped: dropped[channel] ?? 0,
      undelivered: backlog[channel] ?? 0,
    }));
    return [...channels, ...(this.#streams?.figures() ?? [])];
  }

  /**
   * The newest `limit` deliveries (one alert on one channel), with the channels and each one's
   * backlog and drops since the start, for GET /api/alerts and the dashboard.
   */
  recent(limit: number): RecentAlerts {
    return {
      ...this.outbox.recent(limit),
      channels: this.channels(),
      backlog: this.outbox.backlog(),
      dropped: this.outbox.droppedSinceStart(),
    };
  }

  /** Stops following and delivering; what is undelivered stays in the outbox for the next start. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.monitor.stop();
    await Promise.all([this.dispatcher.stop(), this.#streams?.stop()]);
  }

  #noteAttempt(channel: string, error: string | undefined): void {
    if (!this.#errors.has(channel) || this.#errors.get(channel) === error) return;
    this.#errors.set(channel, error);
    this.#showHealth();
  }

  #showHealth(): void {
    if (this.#configured.length === 0) return;
    const failing = [...this.#errors].filter(([, error]) => error !== undefined);
    const backlog = this.outbox.backlog();
    const waiting = (channel: string) => (backlog[channel] ? ` (${backlog[channel]} waiting)` : '');
    this.opts.daemon.setNodeCondition(
      'AlertsDelivering',
      failing.length === 0
        ? { healthy: true, reason: 'Delivering', message: `alerts go to ${this.#configured.join(', ')}` }
        : {
            healthy: false,
            reason: failing.some(([channel]) => this.#unreadable.has(channel))
              ? 'SecretUnreadable'
              : 'DeliveryFailing',
            message: failing.map(([channel, error]) => `${channel}: ${error}${waiting(channel)}`).join('; '),
          },
    );
  }
}
