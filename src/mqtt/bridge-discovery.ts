import { type Config, mqttOf } from '../config/schema.js';
import type { StorageGuard } from '../control/storage-guard.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import type { BridgePublisher } from './bridge-publish.js';
import {
  type DiscoveryMessage,
  discoveryDiff,
  discoveryPayload,
  discoveryTopic,
  homeAssistantStatusTopic,
} from './discovery.js';

/** Home Assistant birth messages are answered after this quiet delay, ms (a burst coalesces). */
export const BIRTH_QUIET_MS = 1_000;
/** … and at most once per this interval, ms: a flood of births cannot make us flood discovery. */
export const BIRTH_MIN_INTERVAL_MS = 5_000;

/** What this node last published, by loop and discovery component (kept in the database). */
interface PublishedRecord {
  loops: string[];
  /** Component unique id → platform. */
  components: Record<string, string>;
}

const PUBLISHED_KEY = 'mqttPublished';

type DiscoveryOptions = Pick<MqttBridgeOptions, 'connection' | 'control' | 'desired' | 'topics' | 'version'>;

interface DiscoveryDeps {
  storage: StorageGuard;
  output: BridgePublisher;
  /** A removed loop's retained state was cleared: its last published state is forgotten. */
  forgetState: (loop: string) => void;
}

/** Home Assistant's status topic (its birth and will messages) under the config's prefix. */
export function birthTopic(config: Config): string {
  return homeAssistantStatusTopic(mqttOf(config).discovery.prefix);
}

/** Whether a message on Home Assistant's status topic is its birth (bounded before decoding). */
export function isBirthMessage(payload: Buffer): boolean {
  return payload.length <= 64 && payload.toString('utf8').trim() === 'online';
}

/**
 * Makes the broker match the config: discovery (a removed component first gets HA's removal
 * marker) and retained loop states (a removed loop's is cleared). What was published is
 * remembered in the database, so a loop removed while offline or while the daemon was
 * stopped is still cleared at the next connection. Level-based, like the loops.
 */
export class DiscoveryReconciler {
  private discovery: Map<string, string> | undefined;
  private published: PublishedRecord | undefined;
  private reconcileSequence = 0;

  constructor(
    private readonly opts: DiscoveryOptions,
    private readonly deps: DiscoveryDeps,
  ) {}

  /** The next reconcile republishes every component (after a connect or HA's birth). */
  forgetDiscovery(): void {
    this.discovery = undefined;
  }

  reconcile(): void {
    if (!this.opts.connection.connected) return;
    const config = this.opts.control.currentConfig();
    // What this process published (or is publishing) wins over the database, which is only
    // written once the publishes went through: two reconciles in quick succession see each other.
    const record = this.published ?? this.loadRecord();
    const loops = Object.keys(config.loops);
    const removedLoops = record.loops.filter((loop) => !loops.includes(loop));

    const next = wantedDiscovery(config, this.opts.version);
    const prefix = mqttOf(config).discovery.prefix;
    // Not published in this process yet: start from what the database says was published, so
    // removal markers go out for components that are gone.
    const previous =
      this.discovery ?? previousDiscovery(record, next[0]?.topic ?? discoveryTopic(prefix, config.node.id));
    const diff = discoveryDiff(previous, next);
    const { output } = this.deps;
    const sends = [
      ...diff.publishes.map((message) => output.publish(message.topic, message.payload, true)),
      ...removedLoops.map((loop) => output.publish(this.opts.topics.loopState(loop), '', true)),
    ];
    for (const loop of removedLoops) this.deps.forgetState(loop);
    this.discovery = diff.published;
    const components = Object.fromEntries(
      Object.entries(next[0]?.payload.cmps ?? {}).map(([id, component]) => [id, component.p]),
    );
    this.rememberOnceSent({ loops, components }, sends);
  }

  /**
   * Remember it durably only once every publish went out; otherwise forget it, so the next
   * connection reconciles from the database again. A newer reconcile supersedes this one.
   */
  private rememberOnceSent(published: PublishedRecord, sends: Promise<boolean>[]): void {
    this.published = published;
    const sequence = ++this.reconcileSequence;
    void Promise.all(sends).then((ok) => {
      if (sequence !== this.reconcileSequence) return;
      if (ok.every(Boolean)) this.saveRecord(published);
      else this.published = undefined;
    });
  }

  private loadRecord(): PublishedRecord {
    const read = this.deps.storage.attempt('read', 'what MQTT published', () =>
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
    const { storage } = this.deps;
    const stored = storage.attempt('read', 'what MQTT published', () =>
      this.opts.desired.getMeta(PUBLISHED_KEY),
    );
    if (stored.ok && stored.value === text) return;
    storage.attempt('write', 'remember what MQTT published', () =>
      this.opts.desired.setMeta(PUBLISHED_KEY, text),
    );
  }
}

/** The discovery message the config asks for; none when discovery is disabled. */
function wantedDiscovery(config: Config, version: string): DiscoveryMessage[] {
  const mqtt = mqttOf(config);
  if (!mqtt.discovery.enabled) return [];
  return [discoveryPayload(config, { prefix: mqtt.discovery.prefix, baseTopic: mqtt.baseTopic, version })];
}

function previousDiscovery(record: PublishedRecord, topic: string): Map<string, string> | undefined {
  if (Object.keys(record.components).length === 0) return undefined;
  const cmps = Object.fromEntries(Object.entries(record.components).map(([id, p]) => [id, { p }]));
  return new Map([[topic, JSON.stringify({ cmps })]]);
}

/**
 * Home Assistant's birth message: it lost its state, so discovery and states are republished
 * — once, after a short quiet delay, and at most once per BIRTH_MIN_INTERVAL_MS. Level-based:
 * the republish reads the current state when it runs, so coalescing loses nothing, and 2,000
 * births cost one republish instead of 2,000 (22 MB).
 */
export class BirthDebounce {
  private birthTimer: TimerHandle | undefined;
  private lastBirthRepublishAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly republish: () => void,
  ) {}

  onBirth(): void {
    if (this.birthTimer) return;
    const sinceLastMs = this.clock.nowMs() - this.lastBirthRepublishAtMs;
    // Clamped: a wall clock set back must not postpone it for long.
    const delayMs = Math.min(
      BIRTH_MIN_INTERVAL_MS,
      Math.max(BIRTH_QUIET_MS, BIRTH_MIN_INTERVAL_MS - sinceLastMs),
    );
    this.birthTimer = this.clock.setTimer(() => {
      this.birthTimer = undefined;
      this.lastBirthRepublishAtMs = this.clock.nowMs();
      this.republish();
    }, delayMs);
  }

  stop(): void {
    if (this.birthTimer) this.clock.clearTimer(this.birthTimer);
  }
}
