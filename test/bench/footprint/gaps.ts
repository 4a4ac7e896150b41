import Database from 'better-sqlite3';
import { decodeSamples } from '../../../src/store/samples-codec.js';

/**
 * The largest gap between two readings of one loop's sensor in the stored history, simulated s,
 * counting only readings at or after `fromSimMs` (the measurement window). The history keeps
 * one sample per new reading (CycleRecorder), stamped with the reading's time, so gaps between
 * samples are gaps between readings. Also: how many gaps exceeded `lateAfterS`.
 */
export function readingGaps(
  dbPath: string,
  fromSimMs: number,
  lateAfterS: number,
): { maxGapS: number; lateGaps: number; gaps: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT loop, data FROM samples WHERE resolution_s = 0 ORDER BY id').all() as {
      loop: string;
      data: Buffer;
    }[];
    const timesByLoop = new Map<string, number[]>();
    for (const row of rows) {
      const times = timesByLoop.get(row.loop) ?? [];
      for (const sample of decodeSamples(row.data)) if (sample.atMs >= fromSimMs) times.push(sample.atMs);
      timesByLoop.set(row.loop, times);
    }
    let maxGapMs = 0;
    let lateGaps = 0;
    let gaps = 0;
    for (const times of timesByLoop.values()) {
      times.sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) {
        const gapMs = times[i]! - times[i - 1]!;
        gaps++;
        if (gapMs > lateAfterS * 1000) lateGaps++;
        maxGapMs = Math.max(maxGapMs, gapMs);
      }
    }
    return { maxGapS: maxGapMs / 1000, lateGaps, gaps };
  } finally {
    db.close();
  }
}
