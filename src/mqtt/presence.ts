import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ConnectionDrop, MessageHandler, MqttConnection } from './client.js';
import { errorMessage } from './connection-errors.js';

/**
 * Two homeostat processes with the same node id on one broker (a copied SD card, a config
 * reused for a second Pi) publish to the same topics and fight over the same client id: each
 * one's commands, states and Home Assistant entities are the other's. Nothing fails loudly on
 * its own, so this notices it and says what to do. Regulation never depends on it.
 *
 * Two signs, either enough:
 * - **another instance** on `<base>/instance`: each process publishes, retained, a record with
 *   a random instance id (and its host, pid, start time) after every connect and every
 *   `republishEveryMs`, and reads that topic. A record with another instance id received
 *   after our own came back to us is another live process. Records before ours are not: the
 *   broker keeps the last one of this node's previous process (a restart) and sends it first.
 *   A live other republishes, so it is seen at its next turn anyway;
 * - **our client id taken over**: two processes with the same node id also have the same
 *   default client id (homeostat-<node id>), and the broker drops the older connection when
 *   the newer one connects. Some MQTT 5 brokers say so (DISCONNECT, reason 142 "session taken
 *   over"); MQTT 3.1.1 cannot, and Mosquitto 2.0 (Debian 12, Raspberry Pi OS) only closes the
 *   socket for MQTT 5 too, so KICKS_IN_A_ROW connections in a row, each made at the first
 *   attempt (the broker is up) and closed without a reason within KICKED_MS, count as the same. The two then take turns, each kicking the other. With a
 *   shared client id they also share one session, so neither receives the other's record: this
 *   sign is the one that shows.
 *
 * A clash is logged at error once per streak and per sign (and per other instance), and told
 * to `onClash` (the node records an event); the streak ends after `quietMs` without any sign,
 * logged at info and told to `onClear`.
 */

/** What is published on `<base>/instance`. */
export interface InstanceRecord {
  /** Random, new for each process. */
  instance: string;
  pid: number;
  host: string;
  /** ISO time the process started. */
  startedAt: string;
}

/** A connection dropped within this time of connecting counts towards a kick (MQTT 3.1.1), ms. */
export const KICKED_MS = 10_000;
/** Drops in a row, each within KICKED_MS of connecting, that count as our client id taken over. */
export const KICKS_IN_A_ROW = 3;
/** A kick more than this after the previous one starts a new row, ms. */
const KICKS_WITHIN_MS = 5 * 60_000;
/** MQTT 5 DISCONNECT reason code: another connection with the same client id took over. */
export const SESSION_TAKEN_OVER = 142;
/** Largest record read, bytes: a real one is ~120. */
const MAX_RECORD_BYTES = 1_024;

/** One sign of a clash, as logged. */
export interface NodeIdClash {
  sign: 'instance' | 'takeover';
  message: string;
  /** The other process, when its record was seen. */
  other?: InstanceRecord;
}

export interface NodePresenceOptions {
  connection: Pick<MqttConnection, 'subscribe' | 'publish' | 'onConnect'> &
    Partial<Pick<MqttConnection, 'onDrop'>>;
  /** `<base>/instance` (Topics.instance). */
  topic: string;
  nodeId: string;
  /** The client id this node connects with (named in the takeover message). */
  clientId: string;
  /** This process (default: a new instance id, this pid and host, now). */
  self: InstanceRecord;
  logger: Logger;
  /** Our record is published again this often, ms (the config's mqtt.heartbeatS). */
  republishEveryMs: number;
  /** A streak ends after this long without a sign, ms; default 3 × republishEveryMs. */
  quietMs?: number;
  onClash?: (clash: NodeIdClash) => void;
  onClear?: () => void;
}

/** This process's record: a new random instance id. */
export function newInstanceRecord(host: string, startedAtMs: number, pid = process.pid): InstanceRecord {
  return { instance: randomUUID(), pid, host, startedAt: new Date(startedAtMs).toISOString() };
}

export class NodePresence {
  /** Our own record came back since the last connect: later foreign records are live others. */
  private armed = false;
  private inStreak = false;
  private lastSignMs = 0;
  /** What was logged in this streak: 'takeover' and the other instances' ids. */
  private readonly logged = new Set<string>();
  private kicks = 0;
  private lastKickMs = 0;
  private republishTimer: NodeJS.Timeout | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly payload: string;
  private readonly quietMs: number;

  constructor(private readonly opts: NodePresenceOptions) {
    this.payload = JSON.stringify(opts.self);
    this.quietMs = opts.quietMs ?? 3 * opts.republishEveryMs;
  }

  /** Before the connection starts: the subscription then goes out with the first connect. */
  start(): void {
    const { connection, topic } = this.opts;
    connection.subscribe(topic, 1, this.onRecord);
    connection.onConnect(() => {
      if (this.stopped) return;
      this.armed = false;
      this.publishSelf();
    });
    connection.onDrop?.((drop) => this.onDrop(drop));
    this.republishTimer = setInterval(() => this.publishSelf(), this.opts.republishEveryMs);
    this.republishTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.republishTimer);
    clearTimeout(this.quietTimer);
  }

  /** True while a clash streak lasts. */
  get clashing(): boolean {
    return this.inStreak;
  }

  private publishSelf(): void {
    if (this.stopped) return;
    this.opts.connection
      .publish(this.opts.topic, this.payload, { qos: 1, retain: true })
      .catch((error: unknown) =>
        this.opts.logger.debug({ err: errorMessage(error) }, 'MQTT instance record not published'),
      );
  }

  private readonly onRecord: MessageHandler = (_topic, payload) => {
    if (this.stopped) return;
    const record = parseRecord(payload);
    if (!record) return;
    if (record.instance === this.opts.self.instance) {
      this.armed = true;
      return;
    }
    if (!this.armed) return;
    const { nodeId } = this.opts;
    this.sign(
      {
        sign: 'instance',
        other: record,
        message:
          `another homeostat with node id ${nodeId} is on this broker (host ${record.host}, pid ${record.pid}, ` +
          `started at ${record.startedAt}): give each node its own node.id in the config`,
      },
      record.instance,
    );
  };

  private onDrop(drop: ConnectionDrop): void {
    if (this.stopped) return;
    const takenOver = drop.reasonCode === SESSION_TAKEN_OVER;
    if (!takenOver) {
      const nowMs = Date.now();
      // A broker restarting refuses a reconnect or two: those connections are not kicks.
      const kicked = drop.upMs < KICKED_MS && drop.reasonCode === undefined && drop.atFirstAttempt;
      // Kicks in a row: reconnects come within a minute (the backoff's cap), so older ones
      // belong to some earlier trouble.
      const inRow = nowMs - this.lastKickMs < KICKS_WITHIN_MS;
      this.kicks = kicked ? (inRow ? this.kicks + 1 : 1) : 0;
      if (kicked) this.lastKickMs = nowMs;
      if (this.kicks < KICKS_IN_A_ROW) return;
    }
    const { nodeId, clientId } = this.opts;
    const how = takenOver
      ? 'the broker handed our client id to a newer connection (session taken over)'
      : `the broker closed our connection right after connecting ${this.kicks} times in a row`;
    this.sign(
      {
        sign: 'takeover',
        message:
          `another client with client id ${clientId} is on this broker (${how}), most likely another ` +
          `homeostat with node id ${nodeId}: give each node its own node.id in the config ` +
          '(or its own mqtt.clientId if this is another program)',
      },
      'takeover',
    );
  }

  /** A sign of a clash: logged once per streak and key; the streak is extended. */
  private sign(clash: NodeIdClash, key: string): void {
    this.lastSignMs = Date.now();
    const firstInStreak = !this.inStreak;
    this.inStreak = true;
    if (!this.logged.has(key)) {
      this.logged.add(key);
      this.opts.logger.error(clash.other ? { other: clash.other } : {}, clash.message);
      try {
        this.opts.onClash?.(clash);
      } catch (error) {
        this.opts.logger.error({ err: errorMessage(error) }, 'node id clash listener failed');
      }
    }
    if (firstInStreak) {
      // The other may not have seen us yet (our record came before it was listening).
      this.publishSelf();
      this.scheduleQuietCheck(this.quietMs);
    }
  }

  private scheduleQuietCheck(delayMs: number): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      const sinceMs = Date.now() - this.lastSignMs;
      if (sinceMs < this.quietMs) {
        this.scheduleQuietCheck(this.quietMs - sinceMs);
        return;
      }
      this.inStreak = false;
      this.logged.clear();
      this.opts.logger.info(
        `no other homeostat with node id ${this.opts.nodeId} seen on the broker for ${Math.round(sinceMs / 1000)} s`,
      );
      try {
        this.opts.onClear?.();
      } catch (error) {
        this.opts.logger.error({ err: errorMessage(error) }, 'node id clash listener failed');
      }
    }, delayMs);
    this.quietTimer.unref();
  }
}

/** The record in `payload`, or undefined for anything else (any client may publish there). */
export function parseRecord(payload: Buffer): InstanceRecord | undefined {
  if (payload.length === 0 || payload.length > MAX_RECORD_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { instance, pid, host, startedAt } = parsed as Record<string, unknown>;
  if (typeof instance !== 'string' || instance.length === 0 || instance.length > 64) return undefined;
  return {
    instance,
    pid: typeof pid === 'number' ? pid : 0,
    host: typeof host === 'string' ? host.slice(0, 64) : '?',
    startedAt: typeof startedAt === 'string' ? startedAt.slice(0, 40) : '?',
  };
}
