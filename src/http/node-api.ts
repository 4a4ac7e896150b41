import type { Daemon } from '../daemon/daemon.js';
import type { MqttConnection } from '../mqtt/client.js';
import type { Clock } from '../runtime/clock.js';
import type { StoredEvent } from '../store/desired-store.js';
import type { StoreSupervisor } from '../store/supervisor.js';
import type { WatchdogGate } from '../systemd/watchdog.js';
import { homeostatVersion } from '../version.js';
import type { ApiCommand, ApiCommandAnswer, ApiDeps, ApiEventsFilter } from './api-deps.js';
import type { NodeMetrics } from './metrics.js';
import { HttpError } from './respond.js';
import type { HealthView } from './schemas.js';

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
  clock: Clock;
  startedAtMs: number;
}

/** Events read from the database at most, to filter by kind or end time in memory. */
const MAX_EVENTS_SCANNED = 5_000;

/** The API's view of a node: reads of memory, one SQLite query at most, never a throw into regulation. */
export function nodeApiDeps(parts: NodeApiParts): ApiDeps {
  const { daemon, store, gate, connection } = parts;
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
    history: (loop, sinceMs, untilMs) => storeRead(() => store.state.recentHistory(loop, sinceMs, untilMs)),
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
    nowMs: () => parts.clock.nowMs(),
    version: homeostatVersion(),
    startedAtMs: parts.startedAtMs,
  };
}

/**
 * Events written and those waiting for a flush (actuator switches, faults: batched to spare the
 * SD card), oldest first, the newest `limit` that match.
 */
function recentEvents(store: StoreSupervisor, filter: ApiEventsFilter): StoredEvent[] {
  const inMemoryFilter = filter.kind !== undefined || filter.untilMs !== undefined;
  const written = storeRead(() =>
    store.desired.events({
      ...(filter.sinceMs === undefined ? {} : { sinceMs: filter.sinceMs }),
      ...(filter.loop === undefined ? {} : { loop: filter.loop }),
      limit: inMemoryFilter ? MAX_EVENTS_SCANNED : filter.limit,
    }),
  );
  const matches = (event: StoredEvent) =>
    (filter.sinceMs === undefined || event.atMs >= filter.sinceMs) &&
    (filter.untilMs === undefined || event.atMs <= filter.untilMs) &&
    (filter.loop === undefined || event.loop === filter.loop) &&
    (filter.kind === undefined || event.kind === filter.kind);
  // In time order (stable: the log's own order at equal times); the batched ones were recorded
  // before some of the written ones.
  const all = [...written, ...store.state.pendingEvents()].filter(matches).sort((a, b) => a.atMs - b.atMs);
  return all.slice(Math.max(0, all.length - filter.limit));
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
