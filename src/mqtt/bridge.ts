import type { Logger } from 'pino';
import { allowedModes, type Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { Clock, TimerHandle } from '../runtime/clock.js';
import type { DesiredStore } from '../store/desired-store.js';
import { type ChangeLimit, ChangeLimiter, DEFAULT_CHANGE_LIMIT } from './change-limiter.js';
import type { MqttConnection } from './client.js';
import { CommandQueue, DEFAULT_MAX_QUEUED_COMMANDS } from './command-queue.js';
import { type CommandChange, type CommandOutcome, parseCommand, resultPayload } from './commands.js';
import { discoveryDiff, discoveryPayload, discoveryTopic, homeAssistantStatusTopic } from './discovery.js';
import { DEFAULT_REJECTION_WINDOW_MS, RejectedCommandLog } from './rejection-log.js';
import { stateFingerprint, statePayload } from './state-payload.js';
import { StorageGuard } from './storage-guard.js';
import type { CommandKind, Topics } from './topics.js';

export interface MqttBridgeOptions {
  connection: Pick<MqttConnection, 'start' | 'stop' | 'onConnect' | 'publish' | 'subscribe' | 'connected'> &
    Partial<Pick<MqttConnection, 'throttleReceive'>>;
  topics: Topics;
  /** The daemon, as far as the bridge reads and drives it. */
  control: LoopControl;
  /** Where accepted commands are stored (committed before the result is published). */
  desired: DesiredStore;
  clock: Clock;
  logger: Logger;
  /** homeostat's version, for Home Assistant's device and origin blocks. */
  version: string;
  /** An unchanged state is republished this often, ms (heartbeat). Default 60 000. */
  heartbeatMs?: number;
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
   * Resets a loop's fault latched at or before `requestedAtMs` (clock time the reset was
   * received), recorded as coming from `source`; true when one was cleared.
   */
  resetFault(loop: string, source: string, requestedAtMs: number): boolean;
}

/** A received command waiting in the queue. */
interface ReceivedCommand {
  topic: string;
  payload: Buffer;
  /** Delivered from the broker's retained store (a replay), not sent now. */
  retain: boolean;
  /** Clock time of receipt: a fault reset clears only faults latched before it. */
  receivedAtMs: number;
}

/** Home Assistant birth messages are answered after this quiet delay, ms (a burst coalesces). */
export const BIRTH_QUIET_MS = 1_000;
/** … and at most once per this interval, ms: a flood of births cannot make us flood discovery. */
export const BIRTH_MIN_INTERVAL_MS = 5_000;
/** Commands dropped by a full queue are answered by one rejection per loop per this, ms. */
export const BUSY_REPORT_MS = 1_000;
/** Rejected commands of one kind make one event per this window, ms (with a count). */
export const REJECTION_WINDOW_MS = DEFAULT_REJECTION_WINDOW_MS;
/** Changes a loop accepts at once (see ChangeLimiter). */
export const CHANGE_BURST = DEFAULT_CHANGE_LIMIT.burst;
/**
 * After clearing a retained command we ignore the empty message the broker forwards back to
 * us on that topic for this long, clock ms: it is our own clearing, not an empty `fault/reset`.
 */
const CLEAR_ECHO_MS = 30_000;

/** The result of a command that arrived with the retain flag. */
export const RETAINED_REASON =
  'retained command refused: send commands without the retain flag (a retained command is replayed at every restart); the retained message was cleared';

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
  private birthTimer: TimerHandle | undefined;
  private lastBirthRepublishAtMs = Number.NEGATIVE_INFINITY;
  /** Command topics whose retained message we cleared → until when its empty echo is ignored. */
  private readonly clearedTopics = new Map<string, number>();
  private readonly storage: StorageGuard;
  private readonly rejections: RejectedCommandLog;
  private readonly changes: ChangeLimiter;
  private readonly commands: CommandQueue<ReceivedCommand>;
  /** Commands dropped unread because the queue was full, by loop ('' for unknown loops). */
  private readonly busyCounts = new Map<string, number>();
  private busyTimer: TimerHandle | undefined;

  constructor(private readonly opts: MqttBridgeOptions) {
    this.storage = new StorageGuard(opts.logger);
    this.rejections = new RejectedCommandLog({
      clock: opts.clock,
      record: (event) => {
        // A recorded event is no proof that the file takes writes again (the store supervisor
        // defers one it cannot write to its next flush): a failure joins the streak of failed
        // writes, a success does not end it (on a full disk it would log the failure again each
        // rejection window).
        try {
          opts.desired.recordEvent(event);
        } catch (error) {
          this.storage.attempt('write', 'record a rejected command', () => {
            throw error;
          });
        }
      },
    });
    this.changes = new ChangeLimiter(opts.changeLimit ?? DEFAULT_CHANGE_LIMIT);
    const maxQueued = opts.maxQueuedCommands ?? DEFAULT_MAX_QUEUED_COMMANDS;
    this.commands = new CommandQueue<ReceivedCommand>({
      handle: (command) => this.onCommand(command),
      overflow: (command) => this.onBusy(command),
      onError: (error) =>
        opts.logger.error(
          { err: errorMessage(error) },
          'MQTT command handler failed; the next command is handled',
        ),
      maxQueued,
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
    const prefix = this.opts.control.currentConfig().mqtt?.discovery.prefix ?? 'homeassistant';
    connection.subscribe(homeAssistantStatusTopic(prefix), 1, (_topic, payload) => {
      // Home Assistant's birth message: it lost its state, republish everything.
      if (payload.length <= 64 && payload.toString('utf8').trim() === 'online') this.onBirth();
    });
    connection.onConnect(() => this.republishAll('connected'));
    // A command flood waits at the broker while our queue is long (backpressure).
    connection.throttleReceive?.((resume) => this.commands.whenRoom(resume));
    connection.start();
    this.scheduleHeartbeat();
  }

  async stop(): Promise<void> {
    if (this.heartbeatTimer) this.opts.clock.clearTimer(this.heartbeatTimer);
    if (this.birthTimer) this.opts.clock.clearTimer(this.birthTimer);
    if (this.busyTimer) this.opts.clock.clearTimer(this.busyTimer);
    this.busyTimer = undefined;
    this.rejections.stop();
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
    this.changes.retain(Object.keys(this.opts.control.currentConfig().loops));
    this.reconcilePublished();
  }

  /**
   * Home Assistant's birth message: it lost its state, so discovery and states are republished
   * — once, after a short quiet delay, and at most once per BIRTH_MIN_INTERVAL_MS. Level-based:
   * the republish reads the current state when it runs, so coalescing loses nothing, and 2,000
   * births cost one republish instead of 2,000 (22 MB).
   */
  private onBirth(): void {
    if (this.birthTimer) return;
    const sinceLastMs = this.opts.clock.nowMs() - this.lastBirthRepublishAtMs;
    // Clamped: a wall clock set back must not postpone it for long.
    const delayMs = Math.min(
      BIRTH_MIN_INTERVAL_MS,
      Math.max(BIRTH_QUIET_MS, BIRTH_MIN_INTERVAL_MS - sinceLastMs),
    );
    this.birthTimer = this.opts.clock.setTimer(() => {
      this.birthTimer = undefined;
      this.lastBirthRepublishAtMs = this.opts.clock.nowMs();
      this.republishAll('Home Assistant online');
    }, delayMs);
  }

  private republishAll(why: string): void {
    this.opts.logger.info(`MQTT: ${why}: publishing discovery and every loop's state`);
    this.discovery = undefined;
    this.reconcilePublished();
    for (const status of this.opts.control.statuses()) this.publishStatus(status, true);
  }

  /**
   * Makes the broker match the config: discovery (a removed component first gets HA's removal
   * marker) and retained loop states (a removed loop's is cleared). What was published is
   * remembered in the database, so a loop removed while offline or while the daemon was
   * stopped is still cleared at the next connection. Level-based, like the loops.
   */
  private reconcilePublished(): void {
    if (!this.opts.connection.connected) return;
    const config = this.opts.control.currentConfig();
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
    const read = this.storage.attempt('read', 'what MQTT published', () =>
      this.opts.desired.getMeta(PUBLISHED_KEY),
    );
    const text = read.ok ? read.value : undefined;
    if (!text) return { loops: [], components: {} };
    try {
      const parsed = JSON.parse(text) as Partial<PublishedRecord>;
      return { loops: parsed.loops ?? [], components: parsed.components ?? {} };
    } catch {
      return { loops: [], components: {} };
    }
  }

  /** A failed write is logged by the guard; the next connection reconciles from the database again. */
  private saveRecord(record: PublishedRecord): void {
    const text = JSON.stringify(record);
    const stored = this.storage.attempt('read', 'what MQTT published', () =>
      this.opts.desired.getMeta(PUBLISHED_KEY),
    );
    if (stored.ok && stored.value === text) return;
    this.storage.attempt('write', 'remember what MQTT published', () =>
      this.opts.desired.setMeta(PUBLISHED_KEY, text),
    );
  }

  /**
   * One command: validated, stored (committed) before its result is published, never clamped.
   * Every command gets a result, whatever happens to the store. Refused: commands that arrive
   * with the retain flag (a replay from the broker's retained store, not something someone
   * sends now), unknown loops (own keys only: `__proto__` or `constructor` are unknown),
   * invalid payloads, and changes beyond the loop's rate (ChangeLimiter).
   */
  private onCommand({ topic, payload, retain, receivedAtMs }: ReceivedCommand): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    const { loop, kind } = command;
    const nowMs = this.opts.clock.nowMs();
    if (payload.byteLength === 0 && this.isOwnClearing(topic, nowMs)) return;
    const atIso = new Date(nowMs).toISOString();
    const config = this.opts.control.currentConfig();
    const loopConfig = Object.hasOwn(config.loops, loop) ? config.loops[loop] : undefined;
    const reply = { loop, kind, known: loopConfig !== undefined, atIso };

    if (!loopConfig) {
      this.refuse(reply, { accepted: false, reason: `unknown loop "${loop}"` });
      return;
    }
    if (retain) {
      this.clearRetained(topic, nowMs);
      this.refuse(reply, { accepted: false, reason: RETAINED_REASON });
      return;
    }
    const outcome = parseCommand(kind, payload, {
      limits: loopConfig.limits,
      modes: allowedModes(loopConfig),
      step: loopConfig.step,
    });
    if (!outcome.accepted) {
      this.refuse(reply, outcome);
      return;
    }
    const { setpoint, mode, faultReset } = outcome.change;
    if (faultReset) {
      try {
        this.opts.control.resetFault(loop, 'mqtt', receivedAtMs);
      } catch (error) {
        // The daemon records the reset as an event: a full disk may fail it after the latch was
        // cleared in memory. A cycle settles it either way; the sender is told. Rare: only a
        // reset that clears a latch writes.
        this.opts.logger.error({ err: errorMessage(error), loop }, 'fault reset not confirmed');
        this.opts.control.triggerLoop(loop, `mqtt ${kindName(kind)}`);
        this.refuse(reply, { accepted: false, reason: `fault reset not confirmed: ${errorMessage(error)}` });
        return;
      }
      this.publishResult(loop, outcome, atIso, this.currentGeneration(loop));
      this.opts.control.triggerLoop(loop, `mqtt ${kindName(kind)}`);
      return;
    }
    const change: CommandChange = {
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(mode === undefined ? {} : { mode }),
    };
    // Asking for what is already desired changes nothing and costs nothing (QoS 1 duplicates).
    const current = this.storage.attempt('read', 'current desired state', () =>
      this.opts.desired.desired(loop),
    );
    const row = current.ok ? current.value : undefined;
    if (
      row &&
      (setpoint === undefined || setpoint === row.setpoint) &&
      (mode === undefined || mode === row.mode)
    ) {
      this.publishResult(loop, outcome, atIso, row.generation);
      return;
    }
    // Stopping a loop (mode off and nothing else new) is never rate-limited: a person must not
    // wait behind a burst. A setpoint sent with it still counts.
    const onlyStopping = mode === 'off' && (setpoint === undefined || setpoint === row?.setpoint);
    if (!onlyStopping && !this.changes.take(loop, nowMs)) {
      const { burst, perMinute } = this.opts.changeLimit ?? DEFAULT_CHANGE_LIMIT;
      this.refuse(reply, {
        accepted: false,
        reason: `too many changes: loop ${loop} accepts ${burst} at once and ${perMinute} per minute; not applied, send it again later`,
        ...pickRequestId(outcome),
      });
      return;
    }
    const stored = this.storage.attempt('write', 'store a command', () =>
      this.opts.desired.setDesired(loop, change, 'mqtt', outcome.requestId),
    );
    if (!stored.ok) {
      this.publishResult(
        loop,
        { accepted: false, reason: `not stored: ${stored.error.message}`, ...pickRequestId(outcome) },
        atIso,
        row?.generation,
      );
      return;
    }
    this.publishResult(loop, outcome, atIso, stored.value.generation);
    if (stored.value.changed) this.opts.control.triggerLoop(loop, `mqtt ${kindName(kind)}`);
  }

  /**
   * The queue is full (a flood): the command is dropped unread, counted per loop, and answered
   * by one coalesced rejection per loop per BUSY_REPORT_MS carrying the count. Counting costs
   * next to nothing, so the receive path stays short whatever arrives; answering each dropped
   * command would cost a publish each, on the receive path, in the middle of the flood.
   */
  private onBusy({ topic }: ReceivedCommand): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    // Unknown loop ids share one counter (reported as an event only): the map stays bounded.
    const key = Object.hasOwn(this.opts.control.currentConfig().loops, command.loop) ? command.loop : '';
    this.busyCounts.set(key, (this.busyCounts.get(key) ?? 0) + 1);
    this.busyTimer ??= this.opts.clock.setTimer(() => this.reportBusy(), BUSY_REPORT_MS);
  }

  private reportBusy(): void {
    this.busyTimer = undefined;
    const maxQueued = this.opts.maxQueuedCommands ?? DEFAULT_MAX_QUEUED_COMMANDS;
    const atIso = new Date(this.opts.clock.nowMs()).toISOString();
    for (const [loop, count] of this.busyCounts) {
      const reason = `busy: ${count} command${count === 1 ? '' : 's'} dropped unread (more than ${maxQueued} were waiting); send again later`;
      this.rejections.note({ ...(loop ? { loop } : {}), source: 'mqtt', message: reason });
      if (loop) this.publishResult(loop, { accepted: false, reason }, atIso);
    }
    this.busyCounts.clear();
  }

  /** A rejected command: its result now (with the unchanged generation), its event coalesced. */
  private refuse(
    reply: { loop: string; kind: CommandKind; known: boolean; atIso: string },
    outcome: CommandOutcome & { accepted: false },
  ): void {
    const { loop, kind, known, atIso } = reply;
    this.rejections.note({
      ...(known ? { loop } : {}),
      source: 'mqtt',
      message: known ? `${kindName(kind)} rejected: ${outcome.reason}` : outcome.reason,
      ...pickRequestId(outcome),
    });
    this.publishResult(loop, outcome, atIso, known ? this.currentGeneration(loop) : undefined);
  }

  /** The loop's generation for a result, or undefined when the store cannot say. */
  private currentGeneration(loop: string): number | undefined {
    const read = this.storage.attempt('read', 'current desired state', () => this.opts.desired.desired(loop));
    return read.ok ? read.value?.generation : undefined;
  }

  /**
   * Deletes a retained command from the broker (an empty retained publish), so it is not
   * replayed at the next (re)subscribe. The broker forwards that empty message to us too.
   */
  private clearRetained(topic: string, nowMs: number): void {
    this.clearedTopics.set(topic, nowMs + CLEAR_ECHO_MS);
    void this.publish(topic, '', true);
  }

  /** Whether an empty message on `topic` is the echo of our own clearing (consumed once). */
  private isOwnClearing(topic: string, nowMs: number): boolean {
    const untilMs = this.clearedTopics.get(topic);
    if (untilMs === undefined) return false;
    this.clearedTopics.delete(topic);
    return nowMs <= untilMs;
  }

  /**
   * A command's result, not retained, at QoS 0: it is a reply, worth nothing after a reconnect
   * (the retained state says what is in force), and QoS 1 would keep every reply of a flood in
   * memory with a timer until the broker acknowledges it (measured: 45 MB more RSS at peak and
   * 40 % more CPU for 20,000 commands; test/bench/mqtt-flood.ts).
   */
  private publishResult(loop: string, outcome: CommandOutcome, atIso: string, generation?: number): void {
    const payload = resultPayload({
      ...outcome,
      loop,
      atIso,
      ...(generation === undefined ? {} : { generation }),
    });
    this.publish(this.opts.topics.loopResult(loop), payload, false, 0);
  }

  /**
   * Resolves true once the broker has it (QoS 1) or it was written (QoS 0), false when dropped
   * (offline: the next connect redoes it).
   */
  private publish(topic: string, payload: string, retain: boolean, qos: 0 | 1 = 1): Promise<boolean> {
    return this.opts.connection.publish(topic, payload, { qos, retain }).then(
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
      for (const status of this.opts.control.statuses()) this.publishStatus(status);
      this.heartbeatTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.heartbeatTimer = this.opts.clock.setTimer(tick, everyMs);
  }
}

function kindName(kind: CommandKind): string {
  return { setpoint: 'setpoint', mode: 'mode', json: 'set', faultReset: 'fault reset' }[kind];
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function pickRequestId(outcome: { requestId?: string }): { requestId?: string } {
  return outcome.requestId === undefined ? {} : { requestId: outcome.requestId };
}
