import type { RecentDeliveries } from '../alerts/outbox.js';
import type { Config } from '../config/schema.js';
import type { CommandKind } from '../control/commands.js';
import type { LoopStatus } from '../core/status.js';
import type { AlertTestResponse } from '../operations/alert-schemas.js';
import type { HealthView, HistoryPoint } from '../operations/schemas.js';
import type { LoopDesiredRow, StoredEvent, StoredTuning } from '../store/desired-store.js';
import type { RecordedSeriesPoints } from '../store/recorded-store.js';
import type { FleetResponse } from './fleet.js';

export interface ApiEventsFilter {
  sinceMs?: number;
  untilMs?: number;
  loop?: string;
  kind?: string;
  limit: number;
}

/** A history request, validated: both ends included, the span at most MAX_HISTORY_SPAN_MS. */
export interface ApiHistoryQuery {
  loop: string;
  fromMs: number;
  toMs: number;
  maxPoints: number;
}

/** A loop's history for a chart; `memoryOnly` says why only samples not yet flushed are in it. */
export interface ApiHistory {
  points: HistoryPoint[];
  downsampled: boolean;
  memoryOnly?: string;
}

/** The node's recent alerts as the outbox knows them (GET /api/alerts shapes them). */
export interface RecentAlerts extends RecentDeliveries {
  /** The channels alerts go to now, in the config's order (`mqtt` last). */
  channels: string[];
  /** Undelivered alerts per channel (channels with none left out). */
  backlog: Record<string, number>;
  /** Alerts dropped per channel since the start (the outbox over its limit). */
  dropped: Record<string, number>;
}

/** A write as the shared command path takes it (src/control/desired-commands.ts). */
export interface ApiCommand {
  loop: string;
  /** The parser the body goes to: the operation's (operations/table.ts httpCommandKind). */
  kind: CommandKind;
  payload: Uint8Array;
  source: 'http';
  receivedAtMs: number;
}

/** The shared command path's answer, as far as HTTP needs it. */
export interface ApiCommandAnswer {
  known: boolean;
  outcome: { accepted: boolean; reason?: string; requestId?: string };
  generation?: number;
  refusal?: string;
  /** Tuning writes: whether the tuning in force changed. */
  changed?: boolean;
}

/**
 * What the API reads and drives, as functions: the node (src/node.ts) wires them to the daemon,
 * the store and the command path; unit tests pass fakes. Nothing here blocks regulation: each
 * is a read of memory or one short SQLite query, history a read that yields (HistoryReader).
 */
export interface ApiDeps {
  /** The config in force (it changes on reload). */
  config(): Config;
  /** Every loop's latest status. */
  statuses(): LoopStatus[];
  /** Desired state as stored now. */
  desired(): LoopDesiredRow[];
  /** The applied config's generation, if any. */
  configGeneration(): number | undefined;
  /** Events recorded (stored, and waiting for a flush), oldest first: the newest `limit` that match. */
  events(filter: ApiEventsFilter): StoredEvent[];
  /**
   * A loop's history, stored and not yet flushed, downsampled to the query's maxPoints. Async:
   * the read gives the event loop turns (regulation never waits on a chart). Rejects with an
   * HttpError (503 busy or database unreadable, 400 range).
   */
  history(query: ApiHistoryQuery): Promise<ApiHistory>;
  /**
   * The values of the sensors a loop records (loops.<id>.record) in the query's range, stored
   * and not yet flushed, per sensor, oldest first; absent: none are answered. Async like history.
   */
  recorded?(query: ApiHistoryQuery): Promise<RecordedSeriesPoints[]>;
  /**
   * A loop's stored tunings, newest first, each with whether it is in force (one short SQLite
   * read; HttpError 503 when the database cannot answer).
   */
  tunings(loop: string): Array<StoredTuning & { active: boolean }>;
  /** Validates, stores and applies a write: the rules of MQTT commands. */
  submit(command: ApiCommand): ApiCommandAnswer;
  health(): HealthView;
  /** Every status after a cycle; returns the unsubscribe. */
  onStatus(listener: (status: LoopStatus) => void): () => void;
  /** Every event as it is recorded; returns the unsubscribe. */
  onEvent(listener: (event: StoredEvent) => void): () => void;
  /** Every node's loops on the broker (GET /api/fleet); absent without MQTT: 404. */
  fleet?(): FleetResponse;
  /**
   * The node's alert channels (absent: the alert routes answer 404): their ids, a test alert
   * sent through each (or one) at once, with what each answered, and the newest `limit`
   * deliveries (one alert on one channel) from the outbox.
   */
  alerts?: {
    channels(): string[];
    test(channel: string | undefined): Promise<AlertTestResponse['results']>;
    recent(limit: number): RecentAlerts;
  };
  /** Prometheus text (absent: /metrics answers 404). */
  metrics?: { render(): Promise<string>; contentType: string };
  /** The daemon's clock. */
  nowMs(): number;
  version: string;
  startedAtMs: number;
}
