import type Database from 'better-sqlite3';
import { decodeRecorded, type RecordedPoint } from './recorded-codec.js';
import { insertRecorded, prepareInsertRecorded } from './recorded-store.js';

/**
 * Retention of recorded values (loops.<id>.record) with the same limits as the loop's history
 * (retention.ts, which calls this inside its transaction): points before `rawCutoffMs` become
 * one mean per loop, sensor and `downsampleS` bucket (deleted with downsampleS 0), buckets
 * before `bucketCutoffMs` are deleted. A bucket whose points were all gaps stays a gap.
 */
export function pruneRecorded(
  db: Database.Database,
  limits: { rawCutoffMs: number; bucketCutoffMs: number; downsampleS: number },
): { pointsDownsampled: number; bucketsDeleted: number } {
  const deleteRow = db.prepare<[number]>('DELETE FROM recorded_samples WHERE id = ?');
  const insert = prepareInsertRecorded(db);
  const bucketMs = limits.downsampleS * 1000;
  const keep = new Map<string, { loop: string; sensor: string; points: RecordedPoint[] }>();
  const buckets = new Map<string, { loop: string; sensor: string; sums: Map<number, Sum> }>();
  let pointsDownsampled = 0;
  const oldRows = db.prepare<[number], { id: number; loop: string; sensor: string; data: Buffer }>(
    'SELECT id, loop, sensor, data FROM recorded_samples WHERE resolution_s = 0 AND at_ms < ? ORDER BY id',
  );
  for (const row of oldRows.all(limits.rawCutoffMs)) {
    const key = `${row.loop}\u0000${row.sensor}`;
    for (const point of decodeRecorded(row.data)) {
      if (point.atMs >= limits.rawCutoffMs) {
        getOrAdd(keep, key, () => ({ loop: row.loop, sensor: row.sensor, points: [] })).points.push(point);
        continue;
      }
      pointsDownsampled++;
      if (bucketMs === 0) continue;
      const startMs = Math.floor(point.atMs / bucketMs) * bucketMs;
      const series = getOrAdd(buckets, key, () => ({ loop: row.loop, sensor: row.sensor, sums: new Map() }));
      const sum = getOrAdd(series.sums, startMs, () => ({ total: 0, count: 0 }));
      if (point.value !== null) {
        sum.total += point.value;
        sum.count++;
      }
    }
    deleteRow.run(row.id);
  }
  for (const { loop, sensor, points } of keep.values()) insertRecorded(insert, loop, sensor, points, 0);
  for (const { loop, sensor, sums } of buckets.values()) {
    const means = [...sums]
      .sort(([a], [b]) => a - b)
      .map(([atMs, { total, count }]) => ({ atMs, value: count > 0 ? total / count : null }));
    insertRecorded(insert, loop, sensor, means, limits.downsampleS);
  }
  const bucketsDeleted = db
    .prepare<[number]>('DELETE FROM recorded_samples WHERE resolution_s > 0 AND until_ms < ?')
    .run(limits.bucketCutoffMs).changes;
  return { pointsDownsampled, bucketsDeleted };
}

interface Sum {
  total: number;
  count: number;
}

/** The map's value at `key`, made and added when absent (the samples' pruning uses it too). */
export function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
