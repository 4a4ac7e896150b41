import type { Daemon } from '../daemon/daemon.js';
import type { MqttConnection } from '../mqtt/client.js';
import type { HealthView } from '../operations/schemas.js';
import type { StoredEvent } from '../store/desired-store.js';
import { HistoryBusyError, HistoryReader } from '../store/history-reader.js';
import { type RecordedSource, readRecordedYielding } from '../store/recorded-reader.js';
import type { StoreSupervisor } from '../store/supervisor.js';
import type { WatchdogGate } from '../systemd/watchdog.js';
import type { Clock } from '../time/clock.js';
import { homeostatVersion } from '../version.js';
import type {
  ApiCommand,
  ApiCommandAnswer,
  ApiDeps,
  ApiEventsFilter,
  ApiHistory,
  ApiHistoryQuery,
} from './api-deps.js';
import { HistoryBuckets } from './downsample.js';
import { type FleetSource, fleetView } from './fleet.js';
import type { NodeMetrics } from './metrics.js';
import { HttpError } from './respond.js';

/** What of a running node the API reads and drives (src/node.ts passes its parts). */
export interface NodeApiParts {
  daemon: Daemon;
  store: StoreSupervisor;
  gate: WatchdogGate;
  /** The node's MQTT connection; absent without a broker. */
  connection: Pick<MqttConnection, 'connected'> | undefined;
  /** The command path shared with MQTT (src/control/desired-commands.ts). */
  submit(command: ApiCommand): ApiCommandAnswer;
  metrics?: NodeMetrics;
  /** The node's alerts (POST /api/alerts/test). */
  alerts?: ApiDeps['alerts'];
  /** The retained states of the nodes on the broker (src/mqtt/fleet.ts); absent without MQTT. */
  fleet?: FleetSource;
  clock: Clock;
  startedAtMs: number;
}

/**
 * The API's view of a node: reads of memory, one short SQLite query at most or a history read
 * that yields, never a throw into regulation.
 */
export function nodeApiDeps(parts: NodeApiParts): ApiDeps {
  const { daemon, store, gate, connection, fleet } = parts;
  // Asked per request: the supervisor may have moved to the stand-in, or back to the file.
  const file = () =>
    store.onStandIn || store.database.memory
      ? { unavailable: 'the database file cannot be opened: the node runs on an in-memory stand-in' }
      : { path: store.database.name };
  const reader = new HistoryReader({ file, pendingSamples: (loop) => store.state.pendingSamples(loop) });
  const recordedSource = { file, pendingRecorded: (loop: string) => store.state.pendingRecorded(loop) };
  return {
    config: () => daemon.currentConfig(),
    statuses: () => daemon.statuses(),
    desired: () => storeRead(() => store.desired.allDesired()),
    configGeneration: () => {
      try {
        return store.desired.latestConfig()?.generation;
      } catch {
        return undefined;
      }
    },
    events: (filter) => recentEvents(store, filter),
    history: (query) => readHistory(reader, query),
    recorded: (query) => readRecorded(recordedSource, query),
    tunings: (loop) => storeRead(() => store.desired.tunings(loop)),
    submit: (command) => parts.submit(command),
    health: (): HealthView => {
      const storage = store.health();
      const silent = gate.silentLoops();
      return {
        ok: silent.length === 0,
        silentLoops: silent.map((loop) => ({ loop: loop.name, silentS: Math.round(loop.silentMs / 1000) })),
        storage: { healthy: storage.healthy, message: storage.message },
        mqtt: { configured: connection !== undefined, connected: connection?.connected ?? false },
      };
    },
    onStatus: (listener) => daemon.subscribe({ status: listener }),
    onEvent: (listener) => store.events.subscribe(listener),
    ...(parts.metrics ? { metrics: parts.metrics } : {}),
    ...(parts.alerts ? { alerts: parts.alerts } : {}),
    ...(fleet ? { fleet: () => fleetView(fleet, daemon.currentConfig()) } : {}),
    nowMs: () => parts.clock.nowMs(),
    version: homeostatVersion(),
    startedAtMs: parts.startedAtMs,
  };
}

/**
 * Events written and those waiting for a flush (actuator switches, faults: batched to spare the
 * SD card), oldest first, the newest `limit` that match: the filter is applied in SQL, so an old
 * match is found however many newer events there are.
 */
function recentEvents(store: StoreSupervisor, filter: ApiEventsFilter): StoredEvent[] {
  const written = storeRead(() =>
    store.desired.events({
      ...(filter.sinceMs === undefined ? {} : { sinceMs: filter.sinceMs }),
      ...(filter.untilMs === undefined ? {} : { untilMs: filter.untilMs }),
      ...(filter.loop === undefined ? {} : { loop: filter.loop }),
      ...(filter.kind === undefined ? {} : { kind: filter.kind }),
      limit: filter.limit,
    }),
  );
  const matches = (event: StoredEvent) =>
    (filter.sinceMs === undefined || event.atMs >= filter.sinceMs) &&
    (filter.untilMs === undefined || event.atMs <= filter.untilMs) &&
    (filter.loop === undefined || event.loop === filter.loop) &&
    (filter.kind === undefined || event.kind === filter.kind);
  // In time order (stable: the log's own order at equal times); the batched ones were recorded
  // before some of the written ones.
  const all = [...written, ...store.state.pendingEvents().filter(matches)].sort((a, b) => a.atMs - b.atMs);
  return all.slice(Math.max(0, all.length - filter.limit));
}

/** A loop's history through the reader into the buckets; its refusals as HTTP answers. */
async function readHistory(reader: HistoryReader, query: ApiHistoryQuery): Promise<ApiHistory> {
  const buckets = new HistoryBuckets({ fromMs: query.fromMs, toMs: query.toMs }, query.maxPoints);
  let memoryOnly: string | undefined;
  try {
    const read = { loop: query.loop, fromMs: query.fromMs, untilMs: query.toMs };
    ({ memoryOnly } = await reader.read(read, (sample) => buckets.push(sample)));
  } catch (error) {
    if (error instanceof HistoryBusyError) throw new HttpError(503, error.message, { 'Retry-After': '1' });
    if (error instanceof RangeError) throw new HttpError(400, error.message);
    throw new HttpError(
      503,
      `database unreadable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { ...buckets.points(), ...(memoryOnly === undefined ? {} : { memoryOnly }) };
}

/** A loop's recorded values for the history answer; a database that cannot answer is a 503. */
async function readRecorded(source: RecordedSource, query: ApiHistoryQuery) {
  try {
    const read = { loop: query.loop, fromMs: query.fromMs, untilMs: query.toMs };
    return (await readRecordedYielding(source, read)).series;
  } catch (error) {
    throw new HttpError(
      503,
      `database unreadable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A store read for a request: a database that cannot answer is a 503 with the reason. */
function storeRead<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new HttpError(
      503,
      `database unreadable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
