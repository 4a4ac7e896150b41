import type { Logger } from 'pino';
import { z } from 'zod';
import { LOOP_ID_PATTERN, NODE_ID_PATTERN } from '../config/schema/common.js';
import type { MessageHandler, MqttConnection } from './client.js';
import { errorMessage } from './connection-errors.js';

/**
 * The fleet view's source: every node's retained loop states on the broker this node uses
 * (`<baseTopic>/<node>/<loop>/state`, src/mqtt/state-payload.ts) and their availability
 * (`<baseTopic>/<node>/availability`, `online` / `offline`, src/mqtt/client.ts), kept in memory.
 * Read-only: it never publishes nor changes anything.
 *
 * Everything received is hostile: any client of the broker may publish there. A message is
 * dropped (and counted) when it is too large (unread), not JSON, not the fields the page shows,
 * or on a topic whose ids the config schema would refuse; the number of loops and nodes kept is
 * capped, so a flood of made-up loops costs bounded memory. An empty message deletes the entry
 * (a loop removed: its finalizer clears the retained state). Nothing here throws into the
 * connection's handler.
 */

/** Largest state payload read, bytes: a real one is ~1.3 KiB, with long fault messages ~3 KiB. */
export const FLEET_MAX_PAYLOAD_BYTES = 8_192;
/** Loops kept at most (every node together); new ones beyond are dropped and counted. */
export const FLEET_MAX_LOOPS = 1_000;
/** Nodes whose availability is kept at most. */
export const FLEET_MAX_NODES = 1_000;
/** Ids longer than this are refused (the patterns have no length bound; a topic level may be 64 KiB). */
const MAX_ID_LENGTH = 64;

const word = (max: number) => z.string().min(1).max(max);

/** The fields of the retained state the fleet view shows; the rest of the payload is dropped. */
const fleetStatePayload = z.object({
  loop: z.string(),
  /** Not published by this version (state-payload.ts); read when a node does. */
  name: word(100).optional(),
  unit: z.string().max(16).optional(),
  mode: word(32),
  action: word(32),
  setpoint: z.number(),
  measured: z.number().nullable(),
  output: z.number(),
  conditions: z.array(z.object({ type: word(64), status: word(16), reason: z.string().max(200) })).max(32),
  updatedAt: z.iso.datetime({ offset: true }),
});

/** One loop as its node last published it. */
export interface FleetLoopState {
  loop: string;
  name: string | undefined;
  unit: string | undefined;
  mode: string;
  action: string;
  setpoint: number;
  measured: number | null;
  output: number;
  /** The Faulted condition's reason when it is True, else undefined. */
  fault: string | undefined;
  updatedAt: string;
}

/** Why a message was not kept. */
export type FleetDropReason = 'tooLarge' | 'invalid' | 'badTopic' | 'full';

export interface FleetNode {
  node: string;
  /** Its retained availability: true online, false offline, undefined unknown. */
  online: boolean | undefined;
  loops: FleetLoopState[];
}

export interface FleetCollectorOptions {
  connection: Pick<MqttConnection, 'subscribe' | 'unsubscribe'>;
  /** The config's mqtt.baseTopic (the first level(s), before the node id). */
  baseTopic: string;
  logger: Logger;
  maxPayloadBytes?: number;
  maxLoops?: number;
  maxNodes?: number;
}

export class FleetCollector {
  /** node → loop → latest state. */
  private readonly states = new Map<string, Map<string, FleetLoopState>>();
  private readonly availability = new Map<string, boolean>();
  private loopCount = 0;
  private readonly drops: Record<FleetDropReason, number> = { tooLarge: 0, invalid: 0, badTopic: 0, full: 0 };
  private readonly prefix: string;
  private readonly stateFilter: string;
  private readonly availabilityFilter: string;
  private readonly maxPayloadBytes: number;
  private readonly maxLoops: number;
  private readonly maxNodes: number;
  private readonly handler: MessageHandler = (topic, payload) => this.receive(topic, payload);

  constructor(private readonly opts: FleetCollectorOptions) {
    this.prefix = `${opts.baseTopic}/`;
    this.stateFilter = `${opts.baseTopic}/+/+/state`;
    this.availabilityFilter = `${opts.baseTopic}/+/availability`;
    this.maxPayloadBytes = opts.maxPayloadBytes ?? FLEET_MAX_PAYLOAD_BYTES;
    this.maxLoops = opts.maxLoops ?? FLEET_MAX_LOOPS;
    this.maxNodes = opts.maxNodes ?? FLEET_MAX_NODES;
  }

  /** Subscribes (QoS 0: a lost update is replaced by the next heartbeat); the connection keeps it across reconnects. */
  start(): void {
    this.opts.connection.subscribe(this.stateFilter, 0, this.handler);
    this.opts.connection.subscribe(this.availabilityFilter, 0, this.handler);
  }

  stop(): void {
    this.opts.connection.unsubscribe(this.stateFilter, this.handler);
    this.opts.connection.unsubscribe(this.availabilityFilter, this.handler);
  }

  /** Every node known, by id, each with its loops by id. */
  nodes(): FleetNode[] {
    const ids = new Set([...this.states.keys(), ...this.availability.keys()]);
    return [...ids].sort().map((node) => ({
      node,
      online: this.availability.get(node),
      loops: [...(this.states.get(node)?.values() ?? [])].sort((a, b) => (a.loop < b.loop ? -1 : 1)),
    }));
  }

  /** Messages dropped since the start, by reason. */
  dropped(): Readonly<Record<FleetDropReason, number>> {
    return { ...this.drops };
  }

  /** The connection's handler: never throws (it runs inside MQTT.js's parser). */
  private receive(topic: string, payload: Buffer): void {
    try {
      const reason = this.take(topic, payload);
      if (reason) this.drop(reason, topic);
    } catch (error) {
      this.drop('invalid', topic, errorMessage(error));
    }
  }

  /** Stores, updates or deletes what `topic` says; the reason when it is dropped. */
  private take(topic: string, payload: Buffer): FleetDropReason | undefined {
    if (payload.byteLength > this.maxPayloadBytes) return 'tooLarge';
    if (!topic.startsWith(this.prefix)) return 'badTopic';
    const levels = topic.slice(this.prefix.length).split('/');
    const [node, second, third] = levels;
    if (node === undefined || !validId(node, NODE_ID_PATTERN)) return 'badTopic';
    if (levels.length === 2 && second === 'availability') return this.takeAvailability(node, payload);
    if (levels.length !== 3 || third !== 'state' || second === undefined) return 'badTopic';
    if (!validId(second, LOOP_ID_PATTERN)) return 'badTopic';
    return this.takeState(node, second, payload);
  }

  private takeAvailability(node: string, payload: Buffer): FleetDropReason | undefined {
    if (payload.byteLength === 0) {
      this.availability.delete(node);
      return undefined;
    }
    const text = payload.toString('utf8');
    if (text !== 'online' && text !== 'offline') return 'invalid';
    if (!this.availability.has(node) && this.availability.size >= this.maxNodes) return 'full';
    this.availability.set(node, text === 'online');
    return undefined;
  }

  private takeState(node: string, loop: string, payload: Buffer): FleetDropReason | undefined {
    const loops = this.states.get(node);
    if (payload.byteLength === 0) {
      if (loops?.delete(loop)) this.loopCount -= 1;
      if (loops?.size === 0) this.states.delete(node);
      return undefined;
    }
    const state = parseState(loop, payload);
    if (!state) return 'invalid';
    if (!loops?.has(loop) && this.loopCount >= this.maxLoops) return 'full';
    if (loops) {
      if (!loops.has(loop)) this.loopCount += 1;
      loops.set(loop, state);
    } else {
      this.states.set(node, new Map([[loop, state]]));
      this.loopCount += 1;
    }
    return undefined;
  }

  /** The first drop of each reason at warn (someone publishes junk there), the rest at debug. */
  private drop(reason: FleetDropReason, topic: string, detail?: string): void {
    this.drops[reason] += 1;
    const fields = { topic: topic.slice(0, 200), reason, ...(detail ? { err: detail } : {}) };
    const msg = 'fleet view: MQTT message dropped';
    if (this.drops[reason] === 1) this.opts.logger.warn(fields, `${msg} (further ones are logged at debug)`);
    else this.opts.logger.debug(fields, msg);
  }
}

function validId(id: string, pattern: RegExp): boolean {
  return id.length <= MAX_ID_LENGTH && pattern.test(id);
}

/** The payload's shown fields, or undefined when it is not a state of loop `loop`. */
function parseState(loop: string, payload: Buffer): FleetLoopState | undefined {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = fleetStatePayload.safeParse(json);
  if (!parsed.success || parsed.data.loop !== loop) return undefined;
  const { data } = parsed;
  const faulted = data.conditions.find((c) => c.type === 'Faulted' && c.status === 'True');
  return {
    loop,
    name: data.name,
    unit: data.unit,
    mode: data.mode,
    action: data.action,
    setpoint: data.setpoint,
    measured: data.measured,
    output: data.output,
    fault: faulted ? faulted.reason || 'Faulted' : undefined,
    updatedAt: data.updatedAt,
  };
}
