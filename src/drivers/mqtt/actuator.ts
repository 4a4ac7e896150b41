import type { Logger } from 'pino';
import type { DeviceAvailability } from '../../core/actuator-availability.js';
import type { ActuatorLevel } from '../../core/types.js';
import { StampClock } from '../../time/stamps.js';
import type { ActuatorDriver } from '../types.js';
import { AvailabilityWatcher } from './availability.js';
import {
  levelCommandPayload,
  MAX_PAYLOAD_BYTES,
  type Parsed,
  parseNumberPayload,
  parseSwitchState,
} from './payload.js';
import { type DeadMan, shellyReplyLevel } from './switch-presets.js';
import { type MqttTransport, type PublishOptions, TopicSubscription } from './transport.js';

/**
 * Commands are QoS 1 (the broker acknowledges them) and never retained: a retained `ON`
 * would switch the heater on again whenever the plug reconnects, long after homeostat
 * wanted it — the daemon re-asserts the wanted state itself (keep-alive).
 */
export const COMMAND_PUBLISH: Readonly<PublishOptions> = Object.freeze({ qos: 1, retain: false });

/** Options shared by the MQTT actuators. */
export interface MqttActuatorOptions {
  id: string;
  transport: MqttTransport;
  commandTopic: string;
  /** Where the device reports its actual state (no wildcards). */
  stateTopic: string;
  /** A state older than this is unknown (a plug that stopped reporting), ms. */
  stateStaleAfterMs: number;
  /** The daemon's wall clock: what "offline since" is shown in. */
  nowMs: () => number;
  /**
   * The daemon's monotonic clock: states are stamped with it when they arrive, so a wall-clock
   * step neither makes a dead plug's last state look fresh nor a live one stale
   * (time/stamps.ts). Absent: stamps are on `nowMs`.
   */
  monotonicMs?: (() => number) | undefined;
  /** Where a state payload that cannot be understood is reported (once per streak). */
  logger?: Logger | undefined;
  /**
   * Where the device says whether it is alive (Tasmota `tele/<x>/LWT`, Zigbee2MQTT
   * `<device>/availability`, ESPHome `<prefix>/status`, Shelly `<id>/online`); absent: not known.
   */
  availabilityTopic?: string | undefined;
}

/** The last word from the state topic, `atMs` a stamp (monotonic ms). */
type DeviceState<T> = { value: T; atMs: number } | { problem: string; atMs: number };

/**
 * What MQTT actuators share: a subscription to the device's state topic, whose last message
 * is the observed state (or unknown when none came, it is stale, or it was not understood),
 * and absolute commands published on the command topic. Retries, keep-alive and drift are
 * the core's business: the driver only sends and reports what it sees.
 *
 * The state topic is subscribed at QoS 0 (no replayed backlog of old states after a
 * reconnect); a retained state is accepted as the device's last word.
 */
abstract class MqttActuator<T> implements ActuatorDriver {
  readonly id: string;
  readonly simulated = false;
  abstract readonly kind: 'relay' | 'continuous';
  protected readonly opts: MqttActuatorOptions;
  private state: DeviceState<T> | undefined;
  private readonly stamps: StampClock;
  /** A not-understood state has been logged; cleared by an understood one. */
  private problemLogged = false;
  /** The state topic; stopping it is final (see `stop()`). */
  private readonly subscription: TopicSubscription;
  /** The device's availability topic, when it has one. */
  private readonly availabilityWatcher: AvailabilityWatcher | undefined;
  private availabilityListener: (() => void) | undefined;

  constructor(opts: MqttActuatorOptions) {
    if (!(opts.stateStaleAfterMs > 0)) {
      throw new RangeError(
        `actuator ${opts.id}: stateStaleAfterMs must be > 0, got ${opts.stateStaleAfterMs}`,
      );
    }
    this.id = opts.id;
    this.opts = opts;
    this.stamps = new StampClock(opts.nowMs, opts.monotonicMs);
    this.subscription = new TopicSubscription(opts.transport, opts.stateTopic, (_topic, payload) =>
      this.onState(payload),
    );
    this.availabilityWatcher =
      opts.availabilityTopic === undefined
        ? undefined
        : new AvailabilityWatcher(opts.transport, opts.availabilityTopic, this.stamps, () =>
            this.onAvailabilityChange(),
          );
  }

  protected get stopped(): boolean {
    return this.subscription.stopped;
  }

  /** Subscribes to the state topic (the transport keeps it across reconnects). */
  async start(): Promise<void> {
    const subscribed = this.subscription.start();
    this.availabilityWatcher?.start();
    if (subscribed) this.afterStart();
  }

  /** Called once subscribed; for what a kind sets up on the device. */
  protected afterStart(): void {}

  /**
   * Unsubscribes from the state topic (a driver replaced on reload leaves no handler on the
   * shared connection) and refuses further writes: the daemon drives the safe state before it
   * stops a driver, so a write after that is a stale caller, not a command to send. `observe()`
   * keeps reporting the last state until it is stale. Final and idempotent.
   */
  async stop(): Promise<void> {
    this.subscription.stop();
    this.availabilityWatcher?.stop();
    this.availabilityListener = undefined;
  }

  /**
   * The last state reported, if fresh and understood and the device is not offline; `undefined`
   * (unknown) otherwise: an offline plug's last word says nothing of what its relay does now.
   */
  async observe(): Promise<ActuatorLevel> {
    this.beforeObserve();
    if (this.availabilityWatcher?.status.state === 'offline') return undefined;
    const state = this.state;
    if (state === undefined || 'problem' in state) return undefined;
    if (this.stamps.ageOf(state.atMs) > this.opts.stateStaleAfterMs) return undefined;
    return this.toLevel(state.value);
  }

  /** What the device's availability topic last said; undefined without one. */
  availability(): DeviceAvailability | undefined {
    const watcher = this.availabilityWatcher;
    if (watcher === undefined) return undefined;
    const { state, sinceMs, garbage } = watcher.status;
    return {
      state,
      topic: watcher.topic,
      ...(sinceMs === undefined ? {} : { sinceMs }),
      ...(garbage === undefined ? {} : { garbage }),
    };
  }

  /** `listener` runs when the availability changes (the loop then runs at once); replaces the previous one. */
  onAvailability(listener: () => void): void {
    this.availabilityListener = listener;
  }

  /** Publishes the absolute command for `level`; rejects when offline, not acknowledged or stopped. */
  async write(level: number): Promise<void> {
    const payload = this.commandPayload(level);
    this.assertRunning();
    await this.opts.transport.publish(this.opts.commandTopic, payload, COMMAND_PUBLISH);
  }

  /** Throws once stopped (see `stop()`). */
  protected assertRunning(): void {
    if (this.stopped)
      throw new Error(`actuator ${this.id}: driver stopped, not published to ${this.opts.commandTopic}`);
  }

  /** Called at every observe (every cycle); for what a kind keeps up on the device. */
  protected beforeObserve(): void {}

  /** The command for a level; throws RangeError for a level this kind does not accept. */
  protected abstract commandPayload(level: number): string;
  /** A state payload: the device's value, `missing` (not about the state), or rejected. */
  protected abstract parseState(payload: Buffer): Parsed<T>;
  /** The device's value as a level 0..1. */
  protected abstract toLevel(value: T): ActuatorLevel;

  /**
   * Offline voids the last state: a plug that comes back (rebooted, or its bridge restarted) must
   * report again before its state counts, and until then its command is retried (unknown).
   */
  private onAvailabilityChange(): void {
    if (this.stopped) return;
    if (this.availabilityWatcher?.status.state === 'offline') this.state = undefined;
    this.availabilityListener?.();
  }

  /** A state the device reported some other way than its state topic (an answer to a command). */
  protected noteState(value: T): void {
    if (this.stopped) return;
    this.state = { value, atMs: this.stamps.stamp() };
    this.problemLogged = false;
  }

  private onState(payload: Buffer): void {
    if (this.stopped) return;
    const parsed = this.parseState(payload);
    const atMs = this.stamps.stamp();
    if (parsed.ok) {
      this.state = { value: parsed.value, atMs };
      this.problemLogged = false;
      return;
    }
    if (parsed.missing) return;
    // The device's latest word is not understood: its state is unknown, whatever it said before.
    this.state = { problem: parsed.reason, atMs };
    if (!this.problemLogged) {
      this.problemLogged = true;
      this.opts.logger?.warn(
        { actuator: this.id, topic: this.opts.stateTopic, err: parsed.reason },
        `${this.id}: state on ${this.opts.stateTopic} not understood (${parsed.reason}); treating it as unknown`,
      );
    }
  }
}

/** Options of an {@link MqttSwitch}: the payloads of the device (see `switchPreset`). */
export interface MqttSwitchOptions extends MqttActuatorOptions {
  payloadOn: string;
  payloadOff: string;
  stateOn: string;
  stateOff: string;
  /** Dot path of the state in a JSON state payload; absent: the whole payload. */
  stateField?: string | undefined;
  /** The device's own off timer, armed and re-armed while on (see `DeadMan`); absent: none. */
  deadMan?: DeadMan | undefined;
  /** Where a Shelly answers the commands: an answer to ON or OFF is a state report (shellyReplyLevel). */
  replyTopic?: string | undefined;
}

/**
 * A relay behind MQTT: a Tasmota or Zigbee2MQTT plug, a Shelly relay, an ESPHome switch.
 * Accepts only 0 and 1.
 *
 * With a dead man's switch, every ON restarts the device's off timer: Zigbee2MQTT's ON carries
 * `on_time`, Shelly's `toggle_after`; for Tasmota, PulseTime is sent before every ON (the setting heals if the device
 * was reset) and once as soon as the broker is reachable, so a plug found ON at start gets its
 * timer before the next keep-alive. PulseTime changes a device setting, not the relay: it is
 * not an actuator command, and a failed one is retried at the next cycle.
 */
export class MqttSwitch extends MqttActuator<0 | 1> {
  readonly kind = 'relay' as const;
  private readonly payloads: MqttSwitchOptions;
  /** Tasmota PulseTime: sent since start (`armed`), or on its way (`arming`). */
  private pulseTime: 'unarmed' | 'arming' | 'armed' = 'unarmed';
  /** A failed arming has been logged; cleared by a successful one (one warning per streak). */
  private armWarned = false;
  /** The device's answers to the commands, where it sends them (Shelly). */
  private readonly replies: TopicSubscription | undefined;

  constructor(opts: MqttSwitchOptions) {
    super(opts);
    this.payloads = opts;
    this.replies =
      opts.replyTopic === undefined
        ? undefined
        : new TopicSubscription(opts.transport, opts.replyTopic, (_topic, payload) => {
            if (payload.length > MAX_PAYLOAD_BYTES) return; // not an answer of ours: never parsed
            const level = shellyReplyLevel(payload.toString(), opts);
            if (level !== undefined) this.noteState(level);
          });
  }

  override async start(): Promise<void> {
    await super.start();
    this.replies?.start();
  }

  override async stop(): Promise<void> {
    this.replies?.stop();
    await super.stop();
  }

  /** Sends ON or OFF; with a Tasmota dead man's switch, PulseTime first, acknowledged before the ON goes. */
  override async write(level: number): Promise<void> {
    const deadMan = this.payloads.deadMan;
    if (level === 1 && deadMan?.kind === 'tasmota-pulsetime') {
      this.assertRunning();
      await this.opts.transport.publish(deadMan.topic, deadMan.payload, COMMAND_PUBLISH);
      this.pulseTime = 'armed';
    }
    await super.write(level);
  }

  protected override afterStart(): void {
    this.armPulseTime();
  }

  protected override beforeObserve(): void {
    this.armPulseTime();
  }

  /** Tasmota: PulseTime once the broker is reachable, until it has been sent once. */
  private armPulseTime(): void {
    const deadMan = this.payloads.deadMan;
    if (deadMan?.kind !== 'tasmota-pulsetime' || this.pulseTime !== 'unarmed') return;
    if (this.stopped || !this.opts.transport.connected) return;
    this.pulseTime = 'arming';
    this.opts.transport.publish(deadMan.topic, deadMan.payload, COMMAND_PUBLISH).then(
      () => {
        this.pulseTime = 'armed';
        this.armWarned = false;
      },
      (error: unknown) => {
        this.pulseTime = 'unarmed';
        if (this.armWarned) return;
        this.armWarned = true;
        this.opts.logger?.warn(
          {
            actuator: this.id,
            topic: deadMan.topic,
            err: error instanceof Error ? error.message : String(error),
          },
          `${this.id}: could not arm PulseTime on ${deadMan.topic} (does the broker's ACL allow it?); retrying at every cycle`,
        );
      },
    );
  }

  protected commandPayload(level: number): string {
    if (level === 1) {
      const deadMan = this.payloads.deadMan;
      return deadMan !== undefined && 'payloadOn' in deadMan ? deadMan.payloadOn : this.payloads.payloadOn;
    }
    if (level === 0) return this.payloads.payloadOff;
    throw new RangeError(`relay ${this.id}: level must be 0 or 1, got ${level}`);
  }

  protected parseState(payload: Buffer): Parsed<0 | 1> {
    return parseSwitchState(payload, this.payloads);
  }

  protected toLevel(value: 0 | 1): ActuatorLevel {
    return value;
  }
}

/** Options of an {@link MqttLevel}. */
export interface MqttLevelOptions extends MqttActuatorOptions {
  /** Device units at full output (100 for percent, 254 for Zigbee brightness); an integer >= 1. */
  levelScale: number;
  /** Send `{"<commandField>": n}`; absent: the plain number. */
  commandField?: string | undefined;
  /** Dot path of the level in a JSON state payload; absent: the payload is the number. */
  stateField?: string | undefined;
}

/**
 * A continuous actuator behind MQTT (dimmer, valve, fan speed): level 0..1 is sent as the
 * integer `round(level × levelScale)` in device units, and the state is read back in them.
 */
export class MqttLevel extends MqttActuator<number> {
  readonly kind = 'continuous' as const;
  private readonly levelScale: number;
  private readonly commandField: string | undefined;
  private readonly stateField: string | undefined;
  /** The last level written and the device value sent for it. */
  private lastCommand: { level: number; deviceValue: number } | undefined;

  constructor(opts: MqttLevelOptions) {
    super(opts);
    if (!Number.isInteger(opts.levelScale) || opts.levelScale < 1) {
      throw new RangeError(`actuator ${opts.id}: levelScale must be an integer >= 1, got ${opts.levelScale}`);
    }
    this.levelScale = opts.levelScale;
    this.commandField = opts.commandField;
    this.stateField = opts.stateField;
  }

  protected commandPayload(level: number): string {
    if (!(level >= 0 && level <= 1)) {
      throw new RangeError(`continuous actuator ${this.id}: level must be within 0..1, got ${level}`);
    }
    const deviceValue = Math.round(level * this.levelScale);
    this.lastCommand = { level, deviceValue };
    return levelCommandPayload(deviceValue, this.commandField);
  }

  protected parseState(payload: Buffer): Parsed<number> {
    const parsed = parseNumberPayload(payload, this.stateField);
    if (parsed.ok && !(parsed.value >= 0 && parsed.value <= this.levelScale)) {
      return { ok: false, missing: false, reason: `level ${parsed.value} is outside 0..${this.levelScale}` };
    }
    return parsed;
  }

  protected toLevel(deviceValue: number): ActuatorLevel {
    // The device reports what we sent: that is the level we asked for. Dividing back would
    // differ by the rounding (0.425 → 43 → 0.43), more than the core's tolerance at scale 100,
    // and the command would never count as confirmed.
    if (this.lastCommand && this.lastCommand.deviceValue === deviceValue) return this.lastCommand.level;
    return deviceValue / this.levelScale;
  }
}
