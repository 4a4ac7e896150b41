import zlib from 'node:zlib';
import type Database from 'better-sqlite3';
import type { LoopStatus } from '../core/status.js';
import type { StoredEvent } from './desired-store.js';
import { observed, type StoreObserver } from './observer.js';

/**
 * Controller memory, last status, history samples and routine events: written in batches, one
 * transaction per flush (the daemon calls `flush()` every `storage.memoryFlushS`), to spare SD
 * cards. A crash loses at most one flush period of these — by design: the desired state, which
 * must never be lost, is committed at once by DesiredStore. Single writer: the daemon.
 *
 * What a write costs: SQLite writes whole pages, so a commit costs (page size + 24 bytes) in the
 * WAL for every b-tree page it touches, however few bytes changed, and about as much again when
 * the page is checkpointed (test/bench/storage.ts measures it). Hence the layout:
 * - samples: one row per loop per flush holding that flush's readings packed (encodeSamples,
 *   ~5 bytes a reading), appended to a rowid table without a secondary index: a flush touches
 *   the table's last page. History queries scan the table (a few MB after a year).
 * - memory and status: one deflated blob per loop (encodeLoopState, ~250 bytes: one page
 *   where the JSON text would spill over five).
 * Writing a loop's state only when it changed beyond noise was measured too: at the default
 * flush interval it saves under 4 % and loses the "one flush period at most" guarantee, so
 * every flush writes the latest state of every loop that saved one.
 */

/** One history sample: what a loop saw and did when it used a reading. */
export interface Sample {
  atMs: number;
  setpoint: number;
  measured: number | undefined;
  output: number;
  action: string;
}

/** A sample as stored: `resolutionS` 0 for a reading, else the length of the bucket it averages. */
export interface StoredSample extends Sample {
  resolutionS: number;
}

/** A history event that may wait for the next batch (actuator switched, fault raised…). */
export type BufferedEvent = StoredEvent;

/**
 * Readings packed into one samples row at most: ~150 bytes, so three rows share a 512-byte page
 * (a row a byte too big for the page's free space would take a page of its own).
 */
const MAX_SAMPLES_PER_ROW = 32;
/** Pending readings kept per loop while flushes fail: a day at one every 10 s. */
const MAX_PENDING_SAMPLES = 8640;
/** Pending events kept while flushes fail. */
const MAX_PENDING_EVENTS = 10_000;

type PendingState = { memory: unknown; status: LoopStatus; atMs: number };

export class StateStore {
  private readonly pendingState = new Map<string, PendingState>();
  private readonly pendingSamples = new Map<string, Sample[]>();
  private readonly pendingEvents: BufferedEvent[] = [];
  private statements;

  /** `observer`: told of every operation's outcome (the store supervisor). */
  constructor(
    private db: Database.Database,
    private readonly observer?: StoreObserver,
  ) {
    this.statements = StateStore.prepare(db);
  }

  /**
   * Moves the store to another (migrated) database: a recovered or reopened file. What waits
   * for a flush stays pending and goes to the new file.
   */
  useDatabase(db: Database.Database): void {
    this.statements = StateStore.prepare(db);
    this.db = db;
  }

  private static prepare(db: Database.Database) {
    return {
      upsertState: db.prepare<[string, Buffer, number]>(
        `INSERT INTO loop_state (loop, state, saved_at_ms) VALUES (?, ?, ?)
         ON CONFLICT (loop) DO UPDATE SET state = excluded.state, saved_at_ms = excluded.saved_at_ms,
           memory_json = NULL, status_json = NULL`,
      ),
      insertSamples: db.prepare<[string, number, number, number, Buffer]>(
        'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
      ),
      insertEvent: db.prepare<[number, string | null, string, string | null, string, string | null]>(
        'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      loadState: db.prepare<[string], StateRow>(
        'SELECT state, memory_json, status_json, saved_at_ms FROM loop_state WHERE loop = ?',
      ),
      history: db.prepare<[string, number], SamplesRow>(
        'SELECT resolution_s, data FROM samples WHERE loop = ? AND until_ms >= ? ORDER BY at_ms, id',
      ),
    };
  }

  /** Remembers the loop's latest memory and status; written at the next flush (latest wins). */
  saveState(loop: string, memory: unknown, status: LoopStatus, atMs: number): void {
    this.pendingState.set(loop, { memory, status, atMs });
  }

  addSample(loop: string, sample: Sample): void {
    const samples = this.pendingSamples.get(loop);
    if (samples) samples.push(sample);
    else this.pendingSamples.set(loop, [sample]);
  }

  addEvent(event: BufferedEvent): void {
    this.pendingEvents.push(event);
  }

  /** Whether anything waits for a flush. */
  get dirty(): boolean {
    return this.pendingState.size + this.pendingSamples.size + this.pendingEvents.length > 0;
  }

  /**
   * Writes everything pending in one transaction. Returns the number of rows written. When the
   * write fails (full disk…), what it held stays pending for the next flush, and the error is
   * thrown.
   */
  flush(): number {
    if (!this.dirty) return 0;
    const states = [...this.pendingState];
    const samples = [...this.pendingSamples];
    const events = this.pendingEvents.splice(0);
    this.pendingState.clear();
    this.pendingSamples.clear();
    let rows = 0;
    try {
      observed(this.observer, 'flush', () =>
        this.db
          .transaction(() => {
            for (const [loop, { memory, status, atMs }] of states) {
              this.statements.upsertState.run(loop, encodeLoopState(memory, status), atMs);
              rows++;
            }
            for (const [loop, loopSamples] of samples) {
              for (let i = 0; i < loopSamples.length; i += MAX_SAMPLES_PER_ROW) {
                const row = loopSamples.slice(i, i + MAX_SAMPLES_PER_ROW);
                insertSamples(this.statements.insertSamples, loop, row, 0);
                rows++;
              }
            }
            for (const event of events) {
              this.statements.insertEvent.run(
                event.atMs,
                event.loop ?? null,
                event.kind,
                event.source ?? null,
                event.message,
                event.data === undefined ? null : JSON.stringify(event.data),
              );
              rows++;
            }
          })
          .immediate(),
      );
    } catch (error) {
      this.requeue(states, samples, events);
      throw error;
    }
    return rows;
  }

  /** The stored memory and status of a loop (what the last flush wrote), if any. */
  load(loop: string): { memory: unknown; status: LoopStatus | undefined; savedAtMs: number } | undefined {
    const row = observed(this.observer, 'load', () => this.statements.loadState.get(loop));
    if (!row) return undefined;
    const { memory, status } = decodeStateRow(row);
    return { memory, status, savedAtMs: row.saved_at_ms };
  }

  /**
   * A loop's stored history at or after `sinceMs`, oldest first: readings, and bucket averages
   * (`resolutionS` > 0) where pruneHistory downsampled. Only what flushes wrote.
   */
  history(loop: string, sinceMs: number): StoredSample[] {
    const out: StoredSample[] = [];
    for (const row of observed(this.observer, 'history', () => this.statements.history.all(loop, sinceMs))) {
      for (const sample of decodeSamples(row.data)) {
        if (sample.atMs >= sinceMs) out.push({ ...sample, resolutionS: row.resolution_s });
      }
    }
    // Rows come in time order; a clock set back can interleave their samples.
    return out.sort((a, b) => a.atMs - b.atMs);
  }

  /**
   * Puts back what a failed flush took (its transaction rolled back), ahead of anything added
   * since, so the next flush retries it. Beyond MAX_PENDING_SAMPLES per loop and
   * MAX_PENDING_EVENTS (a disk full for days) the oldest are dropped, to bound memory.
   */
  private requeue(
    states: [string, PendingState][],
    samples: [string, Sample[]][],
    events: BufferedEvent[],
  ): void {
    for (const [loop, state] of states) if (!this.pendingState.has(loop)) this.pendingState.set(loop, state);
    for (const [loop, older] of samples) {
      const merged = [...older, ...(this.pendingSamples.get(loop) ?? [])];
      this.pendingSamples.set(loop, merged.slice(-MAX_PENDING_SAMPLES));
    }
    this.pendingEvents.unshift(...events);
    const excess = this.pendingEvents.length - MAX_PENDING_EVENTS;
    if (excess > 0) this.pendingEvents.splice(0, excess);
  }
}

/** Writes one samples row (the caller keeps `samples` to a row's worth). */
export function insertSamples(
  statement: Database.Statement<[string, number, number, number, Buffer]>,
  loop: string,
  samples: readonly Sample[],
  resolutionS: number,
): void {
  if (samples.length === 0) return;
  let fromMs = Infinity;
  let untilMs = -Infinity;
  for (const { atMs } of samples) {
    fromMs = Math.min(fromMs, atMs);
    untilMs = Math.max(untilMs, atMs);
  }
  statement.run(loop, fromMs, untilMs, resolutionS, encodeSamples(samples));
}

// ---------------------------------------------------------------------------------------
// Memory and status blob

interface StateRow {
  state: Buffer | string | null;
  memory_json: string | null;
  status_json: string | null;
  saved_at_ms: number;
}

/** First byte of a state blob: 1 = raw deflate of the JSON `[memory, status]` with STATE_DICTIONARY_1. */
const STATE_FORMAT_1 = 1;

/**
 * Preset dictionary of state format 1: text a loop's memory and status JSON usually contains,
 * so that deflate codes it as back-references (a ~2.5 kB state becomes ~250 bytes: one page).
 * Part of the file format: NEVER edit it (blobs written with it could no longer be read);
 * add a format 2 with a new dictionary instead. Its hash is pinned by a test.
 */
export const STATE_DICTIONARY_1 =
  'Invalid","ConfigValid","Applied","SensorMissing","SensorNaN","SensorImplausible","SensorStale",' +
  '"message":"actuators held at their safe state: ","drying","cooling","humidifying","humidity",' +
  '"dehumidify","auto","heat_cool","cool","off","safe-state","retry","drift","BelowSetpoint",' +
  '"AboveSetpoint"," from the setpoint","Off","mode is off","Unknown","NoReading","no usable reading",' +
  '"Pending","an actuator is not (yet) at its wanted level","wanted":1,"observed":1},' +
  '[{"regulating":true,"pid":{"integral":0.1,"derivativePerS":0,"lastMeasured":20.0625,' +
  '"lastAtMs":1767232790000,"lastSetpoint":20,"lastFeedforward":0,"lastOutput":0.1,"lastKp":1,' +
  '"lastTdS":0,"lastSetpointWeight":1},"hysteresisOn":{"raise":false,"lower":false},"relays":{' +
  '"heater":{"windowStartMs":1767232500000,"isOn":false,"pulseEnded":false,"lastSwitchMs":1767225600000}},' +
  '"commands":{"heater":{"level":0,"atMs":1767232500000,"attempts":0,"confirmed":true}},' +
  '"lastActiveMs":{"raise":1767232530000,"lower":1767232530000},"output":0.1,"conditions":[' +
  '{"type":"SensorHealthy","status":"True","reason":"Fresh","message":"reading is fresh and plausible",' +
  '"lastTransitionMs":1767225600000,"observedGeneration":1},{"type":"ActuatorConfirmed","status":"True",' +
  '"reason":"Confirmed","message":"every actuator is at its wanted level","lastTransitionMs":1767232535000,' +
  '"observedGeneration":1},{"type":"Converged","status":"True","reason":"WithinBand",' +
  '"message":"within ±0.5 of the setpoint","lastTransitionMs":1767229730000,"observedGeneration":1},' +
  '{"type":"Faulted","status":"False","reason":"NoFault","message":"no fault","lastTransitionMs":1767225600000,' +
  '"observedGeneration":1},{"type":"Reconciled","status":"True","reason":"CycleSucceeded",' +
  '"message":"desired state applied","lastTransitionMs":1767225600000,"observedGeneration":1}]},' +
  '{"loop":"room","quantity":"temperature","mode":"heat","setpoint":20,"measured":20.0625,' +
  '"measuredAtMs":1767232790000,"output":0.1,"action":"heating","generation":1,"observedGeneration":1,' +
  '"actuators":{"heater":{"wanted":0,"observed":0}},"conditions":[';

const stateDictionary = Buffer.from(STATE_DICTIONARY_1, 'utf8');

/** The stored form of a loop's memory and status (see STATE_FORMAT_1). */
export function encodeLoopState(memory: unknown, status: LoopStatus): Buffer {
  const json = Buffer.from(JSON.stringify([memory ?? null, status]), 'utf8');
  const packed = zlib.deflateRawSync(json, { dictionary: stateDictionary, level: 9 });
  return Buffer.concat([Buffer.from([STATE_FORMAT_1]), packed]);
}

/** Reads a state blob, or the JSON columns version 1 of the schema wrote. Unreadable → undefined. */
function decodeStateRow(row: StateRow): { memory: unknown; status: LoopStatus | undefined } {
  if (row.state instanceof Uint8Array) {
    try {
      if (row.state[0] !== STATE_FORMAT_1) return { memory: undefined, status: undefined };
      const json = zlib.inflateRawSync(row.state.subarray(1), { dictionary: stateDictionary });
      const [memory, status] = JSON.parse(json.toString('utf8')) as [unknown, LoopStatus | null];
      return { memory: memory ?? undefined, status: status ?? undefined };
    } catch {
      return { memory: undefined, status: undefined };
    }
  }
  return {
    memory: parseJson(row.memory_json),
    status: parseJson(row.status_json) as LoopStatus | undefined,
  };
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) ?? undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Packed samples

interface SamplesRow {
  resolution_s: number;
  data: Buffer;
}

/**
 * Samples format 1, a byte string:
 *   format byte (1), then per sample:
 *   flags (1 byte: bits 0–3 action code, bit 4 measured present, bit 5 setpoint follows),
 *   time (zigzag varint, ms: the first sample's absolute, the second's step from the first, then
 *     each step's difference from the previous step — 0, one byte, for a steady period),
 *   [setpoint (zigzag varint of value × 10⁴), when it differs from the previous sample's],
 *   [measured (zigzag varint of the change of value × 10⁴ since the last measured), when present],
 *   output (zigzag varint of the change of value × 10³),
 *   [action text (varint length + UTF-8), when the action code is 15].
 * Setpoint and measured keep 4 decimals (DS18B20 steps of 1/16 °C are exact), output 3 (0.1 %).
 * A reading every 10 s costs ~5 bytes instead of ~55 for a row of columns.
 */
const SAMPLES_FORMAT_1 = 1;
const VALUE_SCALE = 10_000;
const OUTPUT_SCALE = 1_000;
const ACTIONS = ['off', 'idle', 'heating', 'cooling', 'drying', 'fan', 'humidifying'] as const;
const OTHER_ACTION = 15;
const MEASURED_PRESENT = 0x10;
const SETPOINT_FOLLOWS = 0x20;

export function encodeSamples(samples: readonly Sample[]): Buffer {
  const out = new ByteWriter();
  out.byte(SAMPLES_FORMAT_1);
  let previousAtMs: number | undefined;
  let previousStepMs = 0;
  let setpoint: number | undefined;
  let measured = 0;
  let output = 0;
  for (const sample of samples) {
    const code = ACTIONS.indexOf(sample.action as (typeof ACTIONS)[number]);
    const scaledSetpoint = scaled(sample.setpoint, VALUE_SCALE);
    const scaledMeasured =
      sample.measured === undefined || !Number.isFinite(sample.measured)
        ? undefined
        : scaled(sample.measured, VALUE_SCALE);
    let flags = code < 0 ? OTHER_ACTION : code;
    if (scaledMeasured !== undefined) flags |= MEASURED_PRESENT;
    if (scaledSetpoint !== setpoint) flags |= SETPOINT_FOLLOWS;
    out.byte(flags);
    if (previousAtMs === undefined) {
      out.signed(sample.atMs);
    } else {
      const stepMs = sample.atMs - previousAtMs;
      out.signed(stepMs - previousStepMs);
      previousStepMs = stepMs;
    }
    previousAtMs = sample.atMs;
    if (scaledSetpoint !== setpoint) out.signed(scaledSetpoint);
    setpoint = scaledSetpoint;
    if (scaledMeasured !== undefined) {
      out.signed(scaledMeasured - measured);
      measured = scaledMeasured;
    }
    const scaledOutput = scaled(sample.output, OUTPUT_SCALE);
    out.signed(scaledOutput - output);
    output = scaledOutput;
    if (code < 0) out.text(sample.action);
  }
  return out.bytes();
}

export function decodeSamples(data: Uint8Array): Sample[] {
  const input = new ByteReader(data);
  const format = input.byte();
  if (format !== SAMPLES_FORMAT_1) throw new Error(`samples row in unknown format ${format}`);
  const samples: Sample[] = [];
  let atMs: number | undefined;
  let stepMs = 0;
  let setpoint = 0;
  let measured = 0;
  let output = 0;
  while (!input.done) {
    const flags = input.byte();
    if (atMs === undefined) {
      atMs = input.signed();
    } else {
      stepMs += input.signed();
      atMs += stepMs;
    }
    if (flags & SETPOINT_FOLLOWS) setpoint = input.signed();
    let present = false;
    if (flags & MEASURED_PRESENT) {
      measured += input.signed();
      present = true;
    }
    output += input.signed();
    const code = flags & 0x0f;
    const action = code === OTHER_ACTION ? input.text() : (ACTIONS[code] ?? 'idle');
    samples.push({
      atMs,
      setpoint: setpoint / VALUE_SCALE,
      measured: present ? measured / VALUE_SCALE : undefined,
      output: output / OUTPUT_SCALE,
      action,
    });
  }
  return samples;
}

function scaled(value: number, scale: number): number {
  const n = Math.round(value * scale);
  // Beyond ±2^50 the varint arithmetic below would lose integers; no sensor reads that.
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 50)
    throw new RangeError(`sample value ${value} out of range`);
  return n;
}

/** Growable byte buffer with LEB128 varints; arithmetic, not bit operators (values beyond 2^31). */
class ByteWriter {
  private buffer = Buffer.alloc(64);
  private length = 0;

  byte(value: number): void {
    if (this.length === this.buffer.length) {
      const bigger = Buffer.alloc(this.buffer.length * 2);
      this.buffer.copy(bigger);
      this.buffer = bigger;
    }
    this.buffer[this.length++] = value;
  }

  unsigned(value: number): void {
    while (value >= 0x80) {
      this.byte((value % 0x80) + 0x80);
      value = Math.floor(value / 0x80);
    }
    this.byte(value);
  }

  /** Zigzag: 0, −1, 1, −2… → 0, 1, 2, 3…, so small magnitudes of either sign stay short. */
  signed(value: number): void {
    this.unsigned(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  text(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.unsigned(bytes.length);
    for (const b of bytes) this.byte(b);
  }

  bytes(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }
}

class ByteReader {
  private offset = 0;

  constructor(private readonly data: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.data.length;
  }

  byte(): number {
    const value = this.data[this.offset++];
    if (value === undefined) throw new Error('samples row truncated');
    return value;
  }

  unsigned(): number {
    let value = 0;
    let factor = 1;
    for (;;) {
      const b = this.byte();
      value += (b % 0x80) * factor;
      if (b < 0x80) return value;
      factor *= 0x80;
    }
  }

  signed(): number {
    const z = this.unsigned();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  text(): string {
    const length = this.unsigned();
    const start = this.offset;
    this.offset += length;
    if (this.offset > this.data.length) throw new Error('samples row truncated');
    return Buffer.from(this.data.subarray(start, this.offset)).toString('utf8');
  }
}
