/**
 * The way back from an update: before the daemon migrates its database to a newer schema it
 * keeps a copy at the old one beside it, and `homeostat restore` takes that copy as it is.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { restoreBackup } from '../../src/backup/restore.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { LATEST_VERSION, migrate, schemaVersion } from '../../src/store/migrations.js';
import { preMigrationBackupPath } from '../../src/store/pre-migration-backup.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { tempDir } from '../support/tmp.js';
import { NOW_MS } from './support.js';

const OLD_VERSION = LATEST_VERSION - 1;

/** A database file left by the previous homeostat: schema LATEST-1, one event in it. */
function previousReleaseDatabase(dir: string): string {
  const dbPath = path.join(dir, 'homeostat.db');
  const db = new Database(dbPath);
  migrate(db, OLD_VERSION);
  db.prepare(
    "INSERT INTO events (at_ms, kind, message, data_json) VALUES (1, 'note', 'before the update', NULL)",
  ).run();
  db.close();
  return dbPath;
}

function versionAndEvents(file: string): { version: number; messages: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare<[], { message: string }>('SELECT message FROM events ORDER BY id').all();
    return { version: schemaVersion(db), messages: rows.map((row) => row.message) };
  } finally {
    db.close();
  }
}

function open(dbPath: string) {
  const log = recordingLogger();
  const { db } = openStore({ path: dbPath, logger: log.logger, nowMs: () => NOW_MS });
  closeStore(db);
  return log;
}

describe('a copy of the database before a schema migration', () => {
  test(`given a file at schema ${OLD_VERSION}, when the daemon opens it, then a copy at ${OLD_VERSION} is kept beside it and the file is migrated`, (t) => {
    const dbPath = previousReleaseDatabase(tempDir(t));
    const log = open(dbPath);
    const copy = preMigrationBackupPath(dbPath, OLD_VERSION);
    assert.equal(copy, `${dbPath}.schema-${OLD_VERSION}.backup`);
    assert.deepEqual(versionAndEvents(copy), { version: OLD_VERSION, messages: ['before the update'] });
    assert.equal(versionAndEvents(dbPath).version, LATEST_VERSION);
    assert.equal(fs.statSync(copy).mode & 0o777, 0o640);
    assert.ok(
      log
        .messages(LogLevel.info)
        .includes(
          `database kept at schema ${OLD_VERSION} as ${copy} before migrating it (homeostat restore ${copy} undoes the update)`,
        ),
      log.messages().join('\n'),
    );
    assert.deepEqual(
      fs.readdirSync(path.dirname(dbPath)).filter((name) => name.includes('.tmp-')),
      [],
      'no temporary file left',
    );
  });

  test('given copies from earlier updates, then the two newest versions are kept and older ones deleted', (t) => {
    const dir = tempDir(t);
    const dbPath = previousReleaseDatabase(dir);
    for (const version of [OLD_VERSION - 2, OLD_VERSION - 1]) {
      fs.writeFileSync(preMigrationBackupPath(dbPath, version), 'an earlier copy');
    }
    fs.writeFileSync(preMigrationBackupPath(path.join(dir, 'other.db'), 1), "another database's copy");
    open(dbPath);
    assert.deepEqual(
      fs
        .readdirSync(dir)
        .filter((name) => name.includes('.schema-'))
        .sort(),
      [
        `homeostat.db.schema-${OLD_VERSION - 1}.backup`,
        `homeostat.db.schema-${OLD_VERSION}.backup`,
        'other.db.schema-1.backup',
      ].sort(),
    );
  });

  test('given a file already at the latest schema, or no file, then no copy is made', (t) => {
    const dir = tempDir(t);
    const dbPath = path.join(dir, 'new.db');
    open(dbPath);
    open(dbPath);
    assert.deepEqual(
      fs.readdirSync(dir).filter((name) => name.includes('.schema-')),
      [],
    );
  });

  test('given the copy cannot be written, then a warning says so and the database is migrated anyway', (t) => {
    const dbPath = previousReleaseDatabase(tempDir(t));
    // A directory where the copy would go: the rename into place fails.
    fs.mkdirSync(path.join(preMigrationBackupPath(dbPath, OLD_VERSION), 'occupied'), { recursive: true });
    const log = open(dbPath);
    assert.equal(versionAndEvents(dbPath).version, LATEST_VERSION);
    const warnings = log.messages(LogLevel.warn);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(
      warnings[0] ?? '',
      new RegExp(
        `^could not keep a copy of the database at schema ${OLD_VERSION} before migrating it \\(.+\\): migrating anyway; going back to an older homeostat would start from the config$`,
      ),
    );
  });

  test('given the copy, when restored, then the database is the one from before the update and the migrated one is kept aside', async (t) => {
    const dir = tempDir(t);
    const dbPath = previousReleaseDatabase(dir);
    open(dbPath);
    const copy = preMigrationBackupPath(dbPath, OLD_VERSION);
    const lines = await restoreBackup({
      archivePath: copy,
      dbPath,
      configPath: path.join(dir, 'config.yaml'),
      databaseOnly: false,
      nowMs: NOW_MS,
    });
    assert.deepEqual(versionAndEvents(dbPath), { version: OLD_VERSION, messages: ['before the update'] });
    assert.equal(versionAndEvents(`${dbPath}.before-restore-20261204T030000Z`).version, LATEST_VERSION);
    assert.match(
      lines[0] ?? '',
      new RegExp(`^restoring the database ${copy} \\(schema ${OLD_VERSION}, generation \\d+\\)$`),
    );
    assert.equal(fs.existsSync(path.join(dir, 'config.yaml')), false, 'a database alone restores no config');
  });
});
