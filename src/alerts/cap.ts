/**
 * The hourly cap per channel, so a flapping sensor cannot flood a phone: at most `perHour`
 * alerts told per channel in any hour (monotonic time); the rest are held back and counted, and
 * the count rides on the next one told. A resolution is not counted, and is held back only when
 * its alert was (a phone never hears "resolved" of something it was not told).
 */
import type { AlertNotice } from './notice.js';

const HOUR_MS = 3_600_000;
/** Held-back streaks remembered per channel, at most (their resolutions are dropped too). */
const MAX_HELD_STREAKS = 1_000;

export class HourlyCap {
  readonly #toldMs = new Map<string, number[]>();
  readonly #heldBack = new Map<string, number>();
  readonly #heldStreaks = new Map<string, Set<string>>();

  constructor(private readonly perHour: number) {}

  /** The notice to tell on `channel` now (with the count held back since), or undefined: held back. */
  admit(channel: string, notice: AlertNotice, nowMs: number): AlertNotice | undefined {
    const held = this.#heldStreaks.get(channel) ?? new Set<string>();
    this.#heldStreaks.set(channel, held);
    if (notice.phase === 'resolved') {
      if (notice.streakId !== undefined && held.delete(notice.streakId)) return undefined;
      return notice;
    }
    const told = (this.#toldMs.get(channel) ?? []).filter((atMs) => nowMs - atMs < HOUR_MS);
    this.#toldMs.set(channel, told);
    if (told.length >= this.perHour) {
      this.#heldBack.set(channel, (this.#heldBack.get(channel) ?? 0) + 1);
      if (notice.streakId !== undefined) {
        held.add(notice.streakId);
        if (held.size > MAX_HELD_STREAKS) held.delete(held.values().next().value as string);
      }
      return undefined;
    }
    told.push(nowMs);
    const suppressed = this.#heldBack.get(channel) ?? 0;
    this.#heldBack.delete(channel);
    return suppressed > 0 ? { ...notice, suppressed } : notice;
  }

  /** Alerts held back on `channel` and not yet counted on one told. */
  heldBack(channel: string): number {
    return this.#heldBack.get(channel) ?? 0;
  }
}
