/**
 * History as a year of running leaves it, for the history benchmark and the fault scenarios:
 * a slow wave around 18 °C, quantised as a DS18B20 reads.
 */
import { openStore } from '../../src/store/database.js';
import { insertSamples, type Sample } from '../../src/store/state-store.js';
import { silentLogger } from './logger.js';

const DAY_MS = 86_400_000;

/**
 * Seeds `dbPath` (created and migrated with the store's own code) with what a year of running
 * leaves for each loop: readings every `periodS` for the last 7 days in rows of 60 (a flush
 * every 600 s), and 300-s bucket averages from 365 to 7 days back in rows of 36. Returns the
 * samples written per loop.
 */
export function seedHistory(dbPath: string, loops: readonly string[], nowMs: number, periodS = 10): number {
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: () => nowMs });
  try {
    const insert = db.prepare<[string, number, number, number, Buffer]>(
      'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
    );
    let perLoop = 0;
    db.transaction(() => {
      for (const loop of loops) {
        perLoop = 0;
        const rows = (fromMs: number, toMs: number, stepMs: number, perRow: number, resolutionS: number) => {
          let row: Sample[] = [];
          for (let atMs = fromMs; atMs < toMs; atMs += stepMs) {
            row.push(fakeSample(atMs));
            perLoop++;
            if (row.length === perRow) {
              insertSamples(insert, loop, row, resolutionS);
              row = [];
            }
          }
          insertSamples(insert, loop, row, resolutionS);
        };
        rows(nowMs - 365 * DAY_MS, nowMs - 7 * DAY_MS, 300_000, 36, 300);
        rows(nowMs - 7 * DAY_MS, nowMs, periodS * 1000, 60, 0);
      }
    })();
    return perLoop;
  } finally {
    db.close();
  }
}

/** The sample at `atMs` of the seeded wave. */
export function fakeSample(atMs: number): Sample {
  const wave = Math.sin(atMs / 900_000);
  return {
    atMs,
    setpoint: 18,
    measured: Math.round((18 + wave) * 16) / 16,
    output: Math.round((0.4 - wave * 0.3) * 1000) / 1000,
    action: wave < 0 ? 'heating' : 'idle',
  };
}
