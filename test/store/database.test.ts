import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import {
  closeStore,
  describeOpenError,
  openStore,
  openStoreReadOnly,
  STORE_BUSY_TIMEOUT_MS,
  umaskAllowsGroupRead,
} from '../../src/store/database.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';

const NOW_MS = Date.parse('2024-05-01T12:00:00.000Z');
const STAMP = '2024-05-01T12-00-00.000Z';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A pino logger whose lines the test can read. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), lines };
}

function open(dbPath: string) {
  const { logger, lines } = recordingLogger();
  const result = openStore({ path: dbPath, logger, nowMs: () => NOW_MS });
  return { ...result, lines };
}

/** A real database file with some rows, closed (checkpointed, no -wal left). */
function writeRealDb(dbPath: string): void {
  const { db } = open(dbPath);
  const insert = db.prepare('INSERT INTO events (at_ms, kind, message, data_json) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 2_000; i++)
      insert.run(i, 'test', `event ${i}`, JSON.stringify({ pad: 'x'.repeat(200) }));
  })();
  db.close();
}

describe('openStore', () => {
  test('given no file (nor directory), when opened, then both are created, migrated, with the pragmas set', () => {
    const dbPath = path.join(dir, 'nested', 'state', 'homeostat.db');
    const { db, recovered } = open(dbPath);
    assert.equal(recovered, undefined);
    assert.ok(fs.existsSync(dbPath));
    const pragmas = {
      journal_mode: db.pragma('journal_mode', { simple: true }),
      synchronous: db.pragma('synchronous', { simple: true }),
      busy_timeout: db.pragma('busy_timeout', { simple: true }),
      foreign_keys: db.pragma('foreign_keys', { simple: true }),
      user_version: db.pragma('user_version', { simple: true }),
    };
    assert.deepEqual(pragmas, {
      journal_mode: 'wal',
      synchronous: 1, // NORMAL
      // Short: better-sqlite3 is synchronous, so a long wait for another writer's lock
      // froze every loop; a write that meets the lock fails fast and is retried later.
      busy_timeout: STORE_BUSY_TIMEOUT_MS,
      foreign_keys: 1,
      user_version: LATEST_VERSION,
    });
    db.close();
  });

  test('given a healthy file, when reopened, then its rows are there and nothing is moved or logged as error', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    writeRealDb(dbPath);
    const { db, recovered, lines } = open(dbPath);
    assert.equal(recovered, undefined);
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM events').get(), { n: 2_000 });
    assert.deepEqual(
      lines.filter((l) => l.level >= 50),
      [],
    );
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.includes('.corrupt-') || f.includes('.newer-')),
      [],
    );
    db.close();
  });

  const unusable: Array<{
    given: string;
    make: (dbPath: string) => void;
    kind: 'corrupt' | 'newer';
    reason: RegExp;
  }> = [
    {
      given: 'a file of random bytes',
      make: (p) =>
        fs.writeFileSync(p, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 37 + 11) % 256))),
      kind: 'corrupt',
      reason: /not a database/,
    },
    {
      given: 'a real database truncated to half its size',
      make: (p) => {
        writeRealDb(p);
        fs.truncateSync(p, Math.floor(fs.statSync(p).size / 2));
      },
      kind: 'corrupt',
      reason: /malformed/,
    },
    {
      given: 'a database with user_version 99 (written by a newer homeostat)',
      make: (p) => {
        writeRealDb(p);
        const db = new Database(p);
        db.pragma('user_version = 99');
        db.close();
      },
      kind: 'newer',
      reason: /version 99 is newer/,
    },
  ];
  for (const c of unusable) {
    test(`given ${c.given}, when opened, then it is moved to .${c.kind}-<time> and a fresh store is opened`, () => {
      const dbPath = path.join(dir, 'homeostat.db');
      c.make(dbPath);
      const original = fs.readFileSync(dbPath);

      const { db, recovered, lines } = open(dbPath);

      const movedTo = `${dbPath}.${c.kind}-${STAMP}`;
      assert.equal(recovered?.movedTo, movedTo);
      assert.match(recovered?.reason ?? '', c.reason);
      assert.deepEqual(fs.readFileSync(movedTo), original, 'the old file is kept, byte for byte');
      assert.equal(db.pragma('user_version', { simple: true }), LATEST_VERSION);
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM events').get(), { n: 0 });
      const errors = lines.filter((l) => l.level === 50);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]?.path, dbPath);
      assert.equal(errors[0]?.movedTo, movedTo);
      assert.match(errors[0]?.msg ?? '', new RegExp(`${escapeRegExp(dbPath)}.*${escapeRegExp(movedTo)}`));
      db.close();
    });
  }

  test('given a corrupt file with -wal and -shm beside it, when opened, then all three are moved together', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    fs.writeFileSync(dbPath, 'this is not a database, but it is long enough to have a header'.repeat(100));
    fs.writeFileSync(`${dbPath}-wal`, 'old wal');
    fs.writeFileSync(`${dbPath}-shm`, 'old shm');

    const { db, recovered } = open(dbPath);
    db.close();

    const movedTo = `${dbPath}.corrupt-${STAMP}`;
    assert.equal(recovered?.movedTo, movedTo);
    // The -wal may hold the newest good pages: it is kept as it was. The -shm is only an index
    // that SQLite rebuilds (it rewrote it while opening), so only its move is checked.
    assert.equal(fs.readFileSync(`${movedTo}-wal`, 'utf8'), 'old wal');
    assert.ok(fs.existsSync(`${movedTo}-shm`));
    const fresh = fs.existsSync(`${dbPath}-wal`) ? fs.readFileSync(`${dbPath}-wal`, 'utf8') : '';
    assert.notEqual(fresh, 'old wal', 'the fresh store does not replay the old -wal');
  });

  test('given two recoveries at the same instant, when opened, then the second does not overwrite the first', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    fs.writeFileSync(dbPath, 'garbage one'.repeat(100));
    open(dbPath).db.close();
    fs.writeFileSync(dbPath, 'garbage two'.repeat(100));
    const { db, recovered } = open(dbPath);
    db.close();
    assert.equal(recovered?.movedTo, `${dbPath}.corrupt-${STAMP}.1`);
    assert.match(fs.readFileSync(`${dbPath}.corrupt-${STAMP}`, 'utf8'), /^garbage one/);
    assert.match(fs.readFileSync(`${dbPath}.corrupt-${STAMP}.1`, 'utf8'), /^garbage two/);
  });

  test('given a path under a regular file (not a corruption), when opened, then it throws naming the path and the fix, and moves nothing', () => {
    const blocker = path.join(dir, 'not-a-dir');
    fs.writeFileSync(blocker, 'x');
    const dbPath = path.join(blocker, 'homeostat.db');
    assert.throws(
      () => open(dbPath),
      (err: Error) => {
        assert.match(err.message, new RegExp(`^cannot open database ${escapeRegExp(dbPath)}: `));
        assert.match(err.message, /Fix: .*--db/);
        return true;
      },
    );
    assert.deepEqual(fs.readdirSync(dir), ['not-a-dir']);
  });
});

describe('file modes', () => {
  test('given a permissive umask (000), when the store is created and written, then the file, its -wal and -shm are group-readable, never world (0640)', () => {
    const previous = process.umask(0o000);
    try {
      const dbPath = path.join(dir, 'fresh', 'homeostat.db');
      const { db } = open(dbPath);
      db.prepare("INSERT INTO meta (key, value) VALUES ('k', 'v')").run();
      const modes = Object.fromEntries(
        ['', '-wal', '-shm'].map((suffix) => [
          `homeostat.db${suffix}`,
          fs.statSync(dbPath + suffix).mode & 0o777,
        ]),
      );
      assert.deepEqual(modes, {
        'homeostat.db': 0o640,
        'homeostat.db-wal': 0o640,
        'homeostat.db-shm': 0o640,
      });
      assert.equal(
        fs.statSync(path.dirname(dbPath)).mode & 0o777,
        0o750,
        'a directory it creates: the group may enter, nobody else',
      );
      db.close();
    } finally {
      process.umask(previous);
    }
  });

  test('given the unit umask (0027) or a strict one (0077), when the store is created, then the file is 0640 or 0600', () => {
    for (const [mask, expected] of [
      [0o027, 0o640],
      [0o077, 0o600],
    ] as const) {
      const previous = process.umask(mask);
      try {
        const dbPath = path.join(dir, `umask-${mask.toString(8)}.db`);
        open(dbPath).db.close();
        assert.equal(fs.statSync(dbPath).mode & 0o777, expected, `umask ${mask.toString(8)}`);
      } finally {
        process.umask(previous);
      }
    }
  });

  test('given an owner-only database (0600, an older homeostat) and a umask granting group read, when opened, then the group may read it (0640)', () => {
    const previous = process.umask(0o027);
    try {
      const dbPath = path.join(dir, 'homeostat.db');
      writeRealDb(dbPath);
      fs.chmodSync(dbPath, 0o600);
      const { db } = open(dbPath);
      assert.equal(fs.statSync(dbPath).mode & 0o777, 0o640);
      db.close();
    } finally {
      process.umask(previous);
    }
  });

  test('given other group bits chosen by an admin (0660), when opened, then they are kept', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    writeRealDb(dbPath);
    fs.chmodSync(dbPath, 0o660);
    open(dbPath).db.close();
    assert.equal(fs.statSync(dbPath).mode & 0o777, 0o660);
  });

  test('given a world-readable database left by an older version, when opened, then world access is taken away', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    writeRealDb(dbPath);
    fs.chmodSync(dbPath, 0o644);
    const { db } = open(dbPath);
    assert.equal(fs.statSync(dbPath).mode & 0o007, 0);
    assert.equal(fs.statSync(`${dbPath}-wal`).mode & 0o007, 0);
    db.close();
  });
});

describe('umaskAllowsGroupRead', () => {
  const table: Array<[status: string, expected: boolean]> = [
    ['Name:\tnode\nUmask:\t0027\nState:\tR\n', true],
    ['Umask:\t0022\n', true],
    ['Umask:\t0077\n', false],
    ['Umask:\t0047\n', false],
    ['Name:\tnode\n', false],
  ];
  for (const [status, expected] of table) {
    test(`given ${JSON.stringify(status)}, then ${expected}`, () => {
      assert.equal(umaskAllowsGroupRead(status), expected);
    });
  }
  test('given this process, then it reads /proc/self/status', () => {
    const previous = process.umask(0o077);
    try {
      assert.equal(umaskAllowsGroupRead(), false);
    } finally {
      process.umask(previous);
    }
  });
});

describe('closeStore', () => {
  test('given the daemon database in WAL mode, when closed at a clean stop, then it is left in rollback mode with nothing beside it (readable without creating a -shm)', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    const { db } = open(dbPath);
    db.prepare("INSERT INTO meta (key, value) VALUES ('k', 'v')").run();
    closeStore(db);
    assert.deepEqual(fs.readdirSync(dir), ['homeostat.db']);
    const reader = new Database(dbPath, { readonly: true });
    assert.equal(reader.pragma('journal_mode', { simple: true }), 'delete');
    reader.close();
    const reopened = open(dbPath).db;
    assert.equal(reopened.pragma('journal_mode', { simple: true }), 'wal', 'the next start is WAL again');
    reopened.close();
  });

  test('given a reader holding the file, when closed, then it stays WAL and the close still happens', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    const { db } = open(dbPath);
    const reader = openStoreReadOnly(dbPath);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM meta').get();
    closeStore(db);
    assert.equal(db.open, false);
    reader.exec('COMMIT');
    assert.equal(reader.pragma('journal_mode', { simple: true }), 'wal');
    reader.close();
  });
});

describe('describeOpenError', () => {
  // As root, permission and full-disk errors cannot be provoked, so the messages are checked here.
  const dbPath = '/var/lib/homeostat/homeostat.db';
  const table: Array<[code: string, message: string, fix: RegExp]> = [
    [
      'SQLITE_CANTOPEN',
      'unable to open database file',
      /make \/var\/lib\/homeostat and .* writable .*StateDirectory/,
    ],
    ['EACCES', 'permission denied', /writable by the user running homeostat/],
    ['SQLITE_READONLY', 'attempt to write a readonly database', /writable/],
    ['SQLITE_FULL', 'database or disk is full', /filesystem holding \/var\/lib\/homeostat is full/],
    // A full disk must say so, whichever of these codes SQLite gives.
    ['SQLITE_FULL', 'database or disk is full', /^.*Fix: disk full: .*free space on it/],
    [
      'SQLITE_IOERR_SHMSIZE',
      'disk I/O error',
      /Fix: disk full: the filesystem holding \/var\/lib\/homeostat is full/,
    ],
    ['ENOSPC', 'no space left on device', /Fix: disk full/],
    ['ENOSPC', 'no space left on device', /is full/],
    ['SQLITE_BUSY', 'database is locked', /second homeostat daemon/],
    ['SQLITE_IOERR', 'disk I/O error', /check the path and the disk/],
  ];
  for (const [code, message, fix] of table) {
    test(`${code} → names the path, the cause and the fix`, () => {
      const err = Object.assign(new Error(message), { code });
      const text = describeOpenError(dbPath, err);
      assert.ok(text.startsWith(`cannot open database ${dbPath}: ${message} (${code}). Fix: `), text);
      assert.match(text, fix);
    });
  }
});

describe('openStoreReadOnly', () => {
  test('given no file, then it throws: is the daemon running with --db?', () => {
    const dbPath = path.join(dir, 'missing.db');
    assert.throws(() => openStoreReadOnly(dbPath), {
      message: `no database at ${dbPath}: is the daemon running with --db ${dbPath}?`,
    });
    assert.equal(fs.existsSync(dbPath), false, 'a reader never creates the file');
  });

  test('given the daemon has the store open, then a reader sees its commits and cannot write', () => {
    const dbPath = path.join(dir, 'homeostat.db');
    const { db: daemon } = open(dbPath);
    daemon.prepare("INSERT INTO meta (key, value) VALUES ('lastGeneration', '3')").run();

    const reader = openStoreReadOnly(dbPath);
    assert.deepEqual(reader.prepare('SELECT value FROM meta').get(), { value: '3' });
    assert.throws(() => reader.prepare("INSERT INTO meta (key, value) VALUES ('x', 'y')").run(), {
      code: 'SQLITE_READONLY',
    });
    reader.close();
    daemon.close();
  });

  test('given a file at another schema version, then it throws saying which side to upgrade', () => {
    const table: Array<[version: number, fix: RegExp]> = [
      [0, /restart the daemon/],
      [LATEST_VERSION + 1, /upgrade the CLI/],
    ];
    for (const [version, fix] of table) {
      const dbPath = path.join(dir, `v${version}.db`);
      const db = new Database(dbPath);
      db.pragma(`user_version = ${version}`);
      db.close();
      assert.throws(
        () => openStoreReadOnly(dbPath),
        (err: Error) => {
          assert.match(err.message, new RegExp(`schema version ${version}, expected ${LATEST_VERSION}`));
          assert.match(err.message, fix);
          return true;
        },
      );
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
