import type { LoopStatus } from '../core/status.js';
import type { StoredEvent } from './desired-records.js';
import type { Sample } from './samples-codec.js';

/**
 * What StateStore holds in memory between flushes: each loop's latest memory and status, its
 * readings, and routine events. A flush takes it all; a failed flush puts it back.
 */

/** A history event that may wait for the next batch (actuator switched, fault raised…). */
export type BufferedEvent = StoredEvent;

/** Pending readings kept per loop while flushes fail: a day at one every 10 s. */
const MAX_PENDING_SAMPLES = 8640;
/** Pending events kept while flushes fail. */
const MAX_PENDING_EVENTS = 10_000;

export type PendingState = {
  memory: unknown;
  status: LoopStatus;
  atMs: number;
  /** The stored form, made ahead of the flush by encodeSome (spread over turns of the event loop). */
  encoded?: Buffer;
};

/** One flush's worth, in the order it was added. */
export interface Batch {
  states: [string, PendingState][];
  samples: [string, Sample[]][];
  events: BufferedEvent[];
}

export class PendingWrites {
  private readonly pendingState = new Map<string, PendingState>();
  private readonly samplesByLoop = new Map<string, Sample[]>();
  private readonly pendingEvents: BufferedEvent[] = [];

  /** Latest wins (a new state is encoded again). */
  saveState(loop: string, state: PendingState): void {
    this.pendingState.set(loop, state);
  }

  /**
   * Encodes up to `maxLoops` pending states not encoded yet; true when none is left. A state
   * saved again afterwards is a new one to encode.
   */
  encodeSome(maxLoops: number, encode: (state: PendingState) => Buffer): boolean {
    let encoded = 0;
    for (const state of this.pendingState.values()) {
      if (state.encoded) continue;
      if (encoded === maxLoops) return false;
      state.encoded = encode(state);
      encoded++;
    }
    return true;
  }

  addSample(loop: string, sample: Sample): void {
    const samples = this.samplesByLoop.get(loop);
    if (samples) samples.push(sample);
    else this.samplesByLoop.set(loop, [sample]);
  }

  addEvent(event: BufferedEvent): void {
    this.pendingEvents.push(event);
  }

  /**
   * The readings of `loop` that wait for a flush, oldest added first (a copy: what is added or
   * flushed afterwards does not change it). For history that must include the last minutes.
   */
  pendingSamples(loop: string): readonly Sample[] {
    return [...(this.samplesByLoop.get(loop) ?? [])];
  }

  /** The events that wait for a flush, oldest first (a copy). For event lists that must include the last minutes. */
  pendingEventList(): readonly BufferedEvent[] {
    return [...this.pendingEvents];
  }

  /** Whether anything waits for a flush. */
  get dirty(): boolean {
    return this.pendingState.size + this.samplesByLoop.size + this.pendingEvents.length > 0;
  }

  /** Takes everything pending (what is added from now on waits for the next batch). */
  take(): Batch {
    const states = [...this.pendingState];
    const samples = [...this.samplesByLoop];
    const events = this.pendingEvents.splice(0);
    this.pendingState.clear();
    this.samplesByLoop.clear();
    return { states, samples, events };
  }

  /**
   * Puts back what a failed flush took (its transaction rolled back), ahead of anything added
   * since, so the next flush retries it. Beyond MAX_PENDING_SAMPLES per loop and
   * MAX_PENDING_EVENTS (a disk full for days) the oldest are dropped, to bound memory.
   */
  requeue({ states, samples, events }: Batch): void {
    for (const [loop, state] of states) if (!this.pendingState.has(loop)) this.pendingState.set(loop, state);
    for (const [loop, older] of samples) {
      const merged = [...older, ...(this.samplesByLoop.get(loop) ?? [])];
      this.samplesByLoop.set(loop, merged.slice(-MAX_PENDING_SAMPLES));
    }
    this.pendingEvents.unshift(...events);
    const excess = this.pendingEvents.length - MAX_PENDING_EVENTS;
    if (excess > 0) this.pendingEvents.splice(0, excess);
  }
}
