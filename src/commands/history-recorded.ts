import type Database from 'better-sqlite3';
import { parseConfigText } from '../config/load.js';
import { recordedViews } from '../http/recorded-history.js';
import type { RecordedSeriesView } from '../operations/recorded-schemas.js';
import { DesiredStore } from '../store/desired-store.js';
import { readRecorded } from '../store/recorded-store.js';

/**
 * A loop's recorded series (loops.<id>.record) read from the database for `history` when no
 * daemon answers: the same series, labels, units and gaps as the API's `recorded`, named by the
 * config the daemon applied last (stored in the database). Without a stored config that can be
 * read, each sensor found is a series named by its id, without a unit and without gaps added.
 * A database the daemon has not migrated to version 8 yet has none (opened read-only here).
 */
export function recordedFromDatabase(
  db: Database.Database,
  loop: string,
  range: { fromMs: number; toMs: number },
): RecordedSeriesView[] {
  if (!hasRecordedTable(db)) return [];
  const stored = readRecorded(db, loop, { fromMs: range.fromMs, untilMs: Number.MAX_SAFE_INTEGER });
  const text = new DesiredStore(db, Date.now).latestConfig()?.text;
  const parsed = text === undefined ? undefined : parseConfigText(text);
  if (parsed?.ok) {
    return recordedViews(parsed.config, loop, stored, { ...range, maxPoints: Number.MAX_SAFE_INTEGER });
  }
  return stored.map(({ sensor, points }) => ({
    sensor,
    label: sensor,
    unit: '',
    points: points.map((p) => ({ at: new Date(p.atMs).toISOString(), value: p.value })),
  }));
}

function hasRecordedTable(db: Database.Database): boolean {
  const row = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recorded_samples'")
    .get();
  return row !== undefined;
}
