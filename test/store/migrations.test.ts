import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DesiredStore, sha256 } from '../../src/store/desired-store.js';
import {
  LATEST_VERSION,
  MIGRATIONS,
  migrate,
  NewerSchemaError,
  schemaVersion,
} from '../../src/store/migrations.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function tables(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    .map((row) => row.name);
}

function schemaSql(db: Database.Database): string {
  return db
    .prepare<[], { sql: string | null }>('SELECT sql FROM sqlite_master ORDER BY type, name')
    .all()
    .map((row) => row.sql)
    .join('\n');
}

interface Column {
  name: string;
  type: string;
}

/** Columns a CHECK constraint limits to certain values: seeded with one of them. */
const SEED_VALUES: Record<string, unknown> = {
  'tunings.source': 'manual',
  'tunings.setpoint_weight': 0.5,
  'tunings.lower_setpoint_weight': 0.5,
};

/**
 * Inserts one row into every table, with a value per column derived from its declared type, so the
 * test needs no change when a version adds tables. Returns what it inserted, per table.
 * A migration that rewrites values on purpose has to special-case its table in `assertRowsKept`.
 */
function seedEveryTable(db: Database.Database): Map<string, Record<string, unknown>> {
  const seeded = new Map<string, Record<string, unknown>>();
  for (const table of tables(db)) {
    const columns = db.prepare<[], Column>(`SELECT name, type FROM pragma_table_info('${table}')`).all();
    const row: Record<string, unknown> = {};
    for (const column of columns) {
      const type = column.type.toUpperCase();
      const fixed = SEED_VALUES[`${table}.${column.name}`];
      row[column.name] =
        fixed !== undefined
          ? fixed
          : type.includes('INT')
            ? 7
            : type.includes('REAL')
              ? 1.5
              : `seed-${table}-${column.name}`;
    }
    const names = columns.map((c) => `"${c.name}"`).join(', ');
    const params = columns.map((c) => `@${c.name}`).join(', ');
    db.prepare(`INSERT INTO "${table}" (${names}) VALUES (${params})`).run(row);
    seeded.set(table, row);
  }
  return seeded;
}

function assertRowsKept(
  db: Database.Database,
  seeded: Map<string, Record<string, unknown>>,
  label: string,
): void {
  for (const [table, row] of seeded) {
    const existing = new Set(
      db
        .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
        .all()
        .map((c) => c.name),
    );
    const kept = Object.entries(row).filter(([name]) => existing.has(name));
    const where = kept.map(([name]) => `"${name}" = ?`).join(' AND ');
    const count = db
      .prepare<unknown[], { n: number }>(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`)
      .get(...kept.map(([, value]) => value));
    assert.equal(count?.n, 1, `${label}: the row seeded into ${table} is still there`);
  }
}

describe('MIGRATIONS', () => {
  test('are numbered 1, 2, 3… without gaps, and LATEST_VERSION is the last', () => {
    assert.deepEqual(
      MIGRATIONS.map((m) => m.version),
      MIGRATIONS.map((_, i) => i + 1),
    );
    assert.equal(LATEST_VERSION, MIGRATIONS.length);
    for (const m of MIGRATIONS) assert.ok(m.description.length > 0, `version ${m.version} has a description`);
  });
});

describe('migrate', () => {
  test('given an empty file, when migrated, then it is at LATEST_VERSION with the version-1 tables', () => {
    const db = new Database(path.join(dir, 'empty.db'));
    assert.deepEqual(migrate(db), { from: 0, to: LATEST_VERSION });
    assert.equal(schemaVersion(db), LATEST_VERSION);
    const names = tables(db);
    for (const table of ['meta', 'configs', 'loop_desired', 'loop_state', 'events']) {
      assert.ok(names.includes(table), `table ${table} exists`);
    }
    db.close();
  });

  for (const step of MIGRATIONS) {
    const v = step.version;
    test(`given a file at version ${v - 1} with a row in every table, when migrated, then it is at LATEST_VERSION and keeps its rows`, () => {
      const file = path.join(dir, `v${v - 1}.db`);
      const old = new Database(file);
      assert.deepEqual(migrate(old, v - 1), { from: 0, to: v - 1 });
      const seeded = seedEveryTable(old);
      old.close();

      const db = new Database(file);
      assert.deepEqual(migrate(db), { from: v - 1, to: LATEST_VERSION });
      assert.equal(schemaVersion(db), LATEST_VERSION);
      assertRowsKept(db, seeded, `from version ${v - 1}`);
      db.close();
    });
  }

  test('given a version-2 file holding a broker password in a config and an event, when migrated, then both are redacted and the hash is that of the redacted text', () => {
    const db = new Database(path.join(dir, 'secrets.db'));
    migrate(db, 2);
    const text = 'mqtt:\n  url: mqtts://homeostat:s3cret@broker.lan:8883\n';
    db.prepare('INSERT INTO configs (generation, hash, text, applied_at_ms) VALUES (1, ?, ?, 0)').run(
      sha256(text),
      text,
    );
    db.prepare("INSERT INTO events (at_ms, kind, message, data_json) VALUES (0, 'x', ?, ?)").run(
      'connected to mqtts://homeostat:s3cret@broker.lan:8883',
      JSON.stringify({ url: 'mqtts://homeostat:s3cret@broker.lan:8883' }),
    );
    migrate(db);
    const config = db.prepare('SELECT text, hash FROM configs').get() as { text: string; hash: string };
    assert.equal(config.text, 'mqtt:\n  url: mqtts://homeostat:***@broker.lan:8883\n');
    assert.equal(config.hash, sha256(config.text), 'the same file redacted keeps its generation');
    const event = db.prepare('SELECT message, data_json FROM events').get() as Record<string, string>;
    assert.doesNotMatch(JSON.stringify(event), /s3cret/);
    db.close();
  });

  test("given a version-4 file with a loop, a fault reset and events, when migrated, then the loop reads as before, on the file's gains, never tuned", () => {
    const file = path.join(dir, 'v4.db');
    const old = new Database(file);
    migrate(old, 4);
    old
      .prepare(
        `INSERT INTO loop_desired (loop, setpoint, setpoint_source, file_setpoint, mode, mode_source, file_mode,
           section_hash, generation, updated_at_ms, removed_at_ms, fault_reset_at_ms, fault_reset_generation)
         VALUES ('greenhouse', 19, 'mqtt', 18, 'heat', 'file', 'heat', 'h', 3, 5000, NULL, 4000, 3)`,
      )
      .run();
    old.prepare("INSERT INTO meta (key, value) VALUES ('lastGeneration', '3')").run();
    old.close();

    const db = new Database(file);
    migrate(db);
    const store = new DesiredStore(db, () => 9_000);
    assert.deepEqual(store.desired('greenhouse'), {
      loop: 'greenhouse',
      setpoint: 19,
      setpointSource: 'mqtt',
      mode: 'heat',
      modeSource: 'file',
      generation: 3,
      updatedAtMs: 5000,
      faultReset: { atMs: 4000, generation: 3 },
    });
    assert.deepEqual(store.tunings('greenhouse'), []);
    assert.equal(
      store.recordTuning(
        'greenhouse',
        { gains: { kp: 0.2, tiS: 900, tdS: 0 } },
        { apply: false, source: 'autotune' },
      ).version,
      1,
    );
    db.close();
  });

  test('given a migrated file, when migrated again, then nothing changes', () => {
    const db = new Database(path.join(dir, 'twice.db'));
    migrate(db);
    const seeded = seedEveryTable(db);
    const before = schemaSql(db);
    assert.deepEqual(migrate(db), { from: LATEST_VERSION, to: LATEST_VERSION });
    assert.equal(schemaSql(db), before);
    assertRowsKept(db, seeded, 'second run');
    db.close();
  });

  test('given a file newer than this code, when migrated, then NewerSchemaError and the file is untouched', () => {
    const db = new Database(path.join(dir, 'newer.db'));
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    assert.throws(() => migrate(db), NewerSchemaError);
    assert.equal(schemaVersion(db), LATEST_VERSION + 1);
    assert.deepEqual(tables(db), []);
    db.close();
  });
});
