import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { makeDirs } from '../make-dirs.js';
import { BATCH_SYNCHRONOUS } from './durability.js';
import { LATEST_VERSION, migrate, NewerSchemaError, PAGE_SIZE_BYTES, schemaVersion } from './migrations.js';
import { backupBeforeMigration } from './pre-migration-backup.js';
import { needsWriterRecovery, openRecoveredCopy } from './recovered-copy.js';

/**
 * Opening homeostat's SQLite file.
 *
 * One writer: the daemon opens the file read-write with `openStore` and is the only process that
 * writes to it. CLI commands (status, events, history) open it with `openStoreReadOnly`; WAL lets
 * them read while the daemon writes, and they never take the write lock.
 */

/**
 * How long a statement waits for a lock another process holds before failing with SQLITE_BUSY,
 * ms. better-sqlite3 is synchronous: the wait blocks the whole event loop (relay pulse ends,
 * stale-sensor safe states), so it stays a few ms; a failed write is retried later off the
 * control path (the batched flush at its next turn; a command is answered rejected).
 */
export const STORE_BUSY_TIMEOUT_MS = 5;

/**
 * Mode of a new database file (its -wal and -shm follow it): the owner writes, its group reads
 * (`homeostat status` without sudo for members of group homeostat), never the world. The umask
 * still applies (the unit's UMask=0027 gives exactly this; a umask of 0077 gives 0600).
 */
export const STORE_FILE_MODE = 0o640;
/** Mode of a directory the store creates (an existing one is left as it is). */
export const STORE_DIR_MODE = 0o750;

export interface OpenStoreResult {
  db: Database.Database;
  /** Set when the file found at `path` could not be used and was moved aside for a fresh one. */
  recovered?: { movedTo: string; reason: string };
}

/**
 * Opens (creating it and its directory if needed) and migrates the daemon's database.
 *
 * An unreadable database never stops regulation: a corrupt file, or one written by a newer
 * homeostat, is moved aside to `<path>.corrupt-<time>` / `<path>.newer-<time>` (with its -wal and
 * -shm) and a fresh one is opened; the loops then start from the config file. Other failures
 * (permissions, full disk) throw an Error that names the path and the fix: moving a file aside
 * would not help there.
 */
export function openStore(opts: {
  path: string;
  logger: Logger;
  nowMs: () => number;
  /**
   * Run quick_check (reads every page, O(size)) before using the file; default true. Reopening
   * a file that was only unwritable (full disk) skips it: the loops are already running then,
   * and damage is still found by the first read or write that meets it.
   */
  quickCheck?: boolean;
}): OpenStoreResult {
  const dbPath = opts.path;
  const quickCheck = opts.quickCheck ?? true;
  try {
    // A new directory: the group may enter it to read (an existing one is left as it is).
    makeDirs(path.dirname(dbPath), STORE_DIR_MODE);
    restrictFileModes(dbPath);
  } catch (err) {
    throw new Error(describeOpenError(dbPath, err), { cause: err });
  }

  let db: Database.Database | undefined;
  try {
    // The open itself must not wait on another writer's lock: the default is 5 s, event loop held.
    db = new Database(dbPath, { timeout: STORE_BUSY_TIMEOUT_MS });
    prepare(db, dbPath, opts.logger, quickCheck);
    return { db };
  } catch (err) {
    const kind = unusableKind(err);
    if (kind === undefined) {
      closeQuietly(db);
      throw new Error(describeOpenError(dbPath, err), { cause: err });
    }
    return replaceUnusable(db, err, kind, opts);
  }
}

/**
 * The file at `opts.path` is damaged or newer (`kind`): moves it aside with its -wal and -shm,
 * opens a fresh one in its place, and logs what was lost. Throws an Error that names the path
 * and the fix when either step fails.
 */
function replaceUnusable(
  failed: Database.Database | undefined,
  err: unknown,
  kind: 'corrupt' | 'newer',
  opts: { path: string; logger: Logger; nowMs: () => number },
): OpenStoreResult {
  const dbPath = opts.path;
  const reason = err instanceof Error ? err.message : String(err);
  // Move the files while the failed connection is still open: closing it first lets SQLite
  // delete the -wal (it does so for a file it cannot read), and the -wal may hold the newest
  // good pages. Renaming open files is safe on POSIX; the close then finds nothing to delete.
  let movedTo: string;
  try {
    movedTo = moveAside(dbPath, kind, opts.nowMs());
  } catch (moveErr) {
    closeQuietly(failed);
    throw new Error(describeOpenError(dbPath, moveErr), { cause: moveErr });
  }
  closeQuietly(failed);

  let fresh: Database.Database | undefined;
  try {
    restrictFileModes(dbPath);
    fresh = new Database(dbPath, { timeout: STORE_BUSY_TIMEOUT_MS });
    prepare(fresh, dbPath, opts.logger, true);
  } catch (freshErr) {
    closeQuietly(fresh);
    throw new Error(describeOpenError(dbPath, freshErr), { cause: freshErr });
  }
  opts.logger.error(
    { path: dbPath, movedTo, reason },
    `database ${dbPath} could not be used (${reason}); moved it to ${movedTo} and started a fresh one: ` +
      'setpoints and modes changed at runtime, loop memory and history before now are not loaded',
  );
  return { db: fresh, recovered: { movedTo, reason } };
}

/**
 * Opens the database for reading only (CLI commands while the daemon runs). Throws a clear Error
 * when the file does not exist or its schema is not the one this code reads. A WAL index only a
 * writer can rebuild (a daemon killed at the wrong moment, read by someone who cannot write the
 * -shm) is read from a private recovered copy (recovered-copy.ts).
 */
/** The demo's own database (`npm start`), relative to a checkout. */
const DEMO_DB = path.join('var', 'demo.db');

/**
 * What to try when there is no database at `dbPath`: the demo's when it is in `cwd` (a
 * checkout where `npm start` ran), else --db.
 */
export function missingDatabaseHint(dbPath: string, cwd = process.cwd()): string {
  const demo = path.resolve(cwd, DEMO_DB);
  if (path.resolve(cwd, dbPath) !== demo && fs.existsSync(demo)) {
    return `the demo's is ${DEMO_DB} (add --db ${DEMO_DB})`;
  }
  return `is the daemon running with --db ${dbPath}?`;
}

export function openStoreReadOnly(dbPath: string): Database.Database {
  if (!fs.existsSync(dbPath)) {
    throw new Error(`no database at ${dbPath}: ${missingDatabaseHint(dbPath)}`);
  }
  let db: Database.Database;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  } catch (err) {
    throw new Error(describeOpenError(dbPath, err), { cause: err });
  }
  let version: number;
  try {
    version = schemaVersion(db);
  } catch (err) {
    db.close();
    if (!needsWriterRecovery(err)) throw err;
    db = openRecoveredCopy(dbPath, err);
    version = schemaVersion(db);
  }
  if (version !== LATEST_VERSION) {
    db.close();
    const fix =
      version > LATEST_VERSION
        ? 'this homeostat is older than the daemon that wrote it: upgrade the CLI'
        : 'the daemon has not migrated it yet: restart the daemon with this version';
    throw new Error(`database ${dbPath} has schema version ${version}, expected ${LATEST_VERSION}: ${fix}`);
  }
  return db;
}

/**
 * Creates the database file 0640 (less the umask) if it does not exist, and takes world access
 * away from an existing file, -wal and -shm (an older homeostat created them 0644). SQLite
 * creates the -wal and -shm with the mode of the database file, so those follow. Without this,
 * SQLite creates the file 0644 whatever the umask: world-readable, with the config text and the
 * event log inside.
 *
 * A file exactly 0600 (what homeostat made before the database became group-readable) is given
 * group read when the umask allows it (the unit's UMask=0027), so an upgraded install reads like
 * a new one; any other group bits are the admin's choice and are kept.
 */
function restrictFileModes(dbPath: string): void {
  const groupRead = umaskAllowsGroupRead();
  const fd = fs.openSync(dbPath, fs.constants.O_RDWR | fs.constants.O_CREAT, STORE_FILE_MODE);
  try {
    // Owner read-write always.
    adjustMode(fd, 0o600, groupRead);
  } finally {
    fs.closeSync(fd);
  }
  for (const suffix of ['-wal', '-shm']) {
    let walFd: number | undefined;
    try {
      walFd = fs.openSync(dbPath + suffix, fs.constants.O_RDONLY);
      adjustMode(walFd, 0, groupRead);
    } catch {
      // Absent (SQLite creates it with the database file's mode), or not ours to change:
      // SQLite says so if it cannot use it.
    } finally {
      if (walFd !== undefined) fs.closeSync(walFd);
    }
  }
}

/** World bits go, `required` bits come; an owner-only 0600 gains group read if `groupRead`. */
function adjustMode(fd: number, required: number, groupRead: boolean): void {
  const mode = fs.fstatSync(fd).mode & 0o777;
  const wanted = mode === 0o600 && groupRead ? 0o640 : (mode & 0o770) | required;
  if (mode !== wanted) fs.fchmodSync(fd, wanted);
}

/**
 * Whether this process's umask lets a new file be group-readable, read from /proc (Linux):
 * `process.umask()` reads it by setting it, which races with the threads creating files.
 * False when it cannot be known: nothing is widened then.
 */
export function umaskAllowsGroupRead(statusText?: string): boolean {
  let text = statusText;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/status', 'utf8');
    } catch {
      return false;
    }
  }
  const match = /^Umask:\s*([0-7]+)\s*$/m.exec(text);
  return match !== null && (Number.parseInt(match[1] as string, 8) & 0o040) === 0;
}

/** Pragmas, integrity check and migrations on a new connection; throws what went wrong. */
function prepare(db: Database.Database, dbPath: string, logger: Logger, quickCheck: boolean): void {
  // Small pages: every commit rewrites whole pages, so 512-byte pages write a sixth to two
  // fifths of what 4096 does (npm run bench:storage). Takes effect on a new, empty file only.
  db.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
  // WAL: readers (the CLI) never block the daemon, and a commit is one sequential append, which
  // spares SD cards.
  db.pragma('journal_mode = WAL');
  // NORMAL under WAL for the batched history: a commit survives the process crashing (the WAL
  // is in the OS's hands) and reaches the disk at the next checkpoint. Desired-state commits
  // switch to FULL around their transaction (durably, durability.ts), so nothing answered as
  // stored is lost to a power cut.
  db.pragma(`synchronous = ${BATCH_SYNCHRONOUS}`);
  // Only ever a short wait (see STORE_BUSY_TIMEOUT_MS): under WAL the CLI's reads never take
  // the write lock, so a lock held longer is another writer, and waiting would freeze the loops.
  db.pragma(`busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`);
  db.pragma('foreign_keys = ON');
  // quick_check reads every page (O(size), no index cross-check), once per start: it finds a
  // damaged file now instead of in the middle of regulating.
  if (quickCheck) {
    const check = db.pragma('quick_check') as Array<{ quick_check: string }>;
    const problems = check.map((row) => row.quick_check).filter((line) => line !== 'ok');
    if (problems.length > 0) throw new QuickCheckError(problems);
  }
  backupBeforeMigration(db, dbPath, logger);
  const { from, to } = migrate(db);
  if (from !== to)
    logger.info({ path: dbPath, from, to }, `database schema migrated from version ${from} to ${to}`);
}

/**
 * Closes the daemon's database at a clean stop, leaving it in rollback-journal mode: a WAL-mode
 * file can only be read where its -shm exists or can be created, and SQLite deletes the -shm
 * at the last close, so a member of group homeostat (who cannot create files in the state
 * directory) could read the database only while the daemon runs. In rollback mode a read-only
 * reader needs nothing beside the file. The next `openStore` sets WAL again. A reader that
 * holds the file at this moment keeps it in WAL (the switch needs it alone): harmless, the
 * next clean stop tries again. After a crash the -wal and -shm stay (0640, the daemon's):
 * readers use them read-only, which SQLite (3.22+) supports.
 */
export function closeStore(db: Database.Database): void {
  if (!db.open) return;
  try {
    if (db.name !== ':memory:') db.pragma('journal_mode = DELETE');
  } catch {
    // Busy (a reader) or a failing disk: closing matters more.
  }
  closeQuietly(db);
}

function closeQuietly(db: Database.Database | undefined): void {
  try {
    db?.close();
  } catch {
    // Closing a damaged file can fail too; the original error is the one that matters.
  }
}

class QuickCheckError extends Error {
  constructor(problems: string[]) {
    super(`quick_check failed: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`);
    this.name = 'QuickCheckError';
  }
}

/** 'corrupt' or 'newer' when moving the file aside is the cure; undefined for any other error. */
function unusableKind(err: unknown): 'corrupt' | 'newer' | undefined {
  if (err instanceof NewerSchemaError) return 'newer';
  if (err instanceof QuickCheckError) return 'corrupt';
  const code = errorCode(err);
  // Extended codes (SQLITE_CORRUPT_INDEX, …) share the prefix.
  if (code?.startsWith('SQLITE_CORRUPT') || code?.startsWith('SQLITE_NOTADB')) return 'corrupt';
  return undefined;
}

/** Renames the file and its -wal/-shm to `<path>.<kind>-<ISO time, ':' → '-'>`; returns the new path. */
export function moveAside(dbPath: string, kind: 'corrupt' | 'newer', nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/:/g, '-');
  let target = `${dbPath}.${kind}-${stamp}`;
  // Two recoveries in the same millisecond (or a clock set back): never overwrite an earlier one.
  for (let n = 1; fs.existsSync(target); n++) target = `${dbPath}.${kind}-${stamp}.${n}`;
  for (const suffix of ['-wal', '-shm']) {
    if (fs.existsSync(dbPath + suffix)) fs.renameSync(dbPath + suffix, target + suffix);
  }
  fs.renameSync(dbPath, target);
  return target;
}

export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string')
    return err.code;
  return undefined;
}

/**
 * A message a person can act on for a database that could not be opened: the path, what failed,
 * and the fix. Exported for tests (as root, permission errors cannot be provoked).
 */
export function describeOpenError(dbPath: string, err: unknown): string {
  const code = errorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  const dir = path.dirname(dbPath);
  let fix: string;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_PERM':
    case 'SQLITE_READONLY':
    case 'SQLITE_READONLY_DIRECTORY':
    case 'SQLITE_AUTH':
      fix =
        `make ${dir} and ${dbPath} writable by the user running homeostat ` +
        '(with systemd: StateDirectory=homeostat), or choose another path with --db';
      break;
    case 'ENOSPC':
    case 'SQLITE_FULL':
    // SQLite cannot grow the -shm (wal-index) file: seen on a full disk, not otherwise.
    case 'SQLITE_IOERR_SHMSIZE':
      fix = `disk full: the filesystem holding ${dir} is full: free space on it (homeostat retries by itself)`;
      break;
    case 'ENOTDIR':
    case 'EEXIST':
      fix = `a path component of ${dir} exists but is not a directory: choose another path with --db`;
      break;
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      fix = `another process holds ${dbPath} locked: is a second homeostat daemon running with the same --db?`;
      break;
    default:
      fix = 'check the path and the disk, or choose another path with --db';
  }
  return `cannot open database ${dbPath}: ${detail}${code ? ` (${code})` : ''}. Fix: ${fix}`;
}

/**
 * An in-memory database with homeostat's schema: what the daemon regulates on while its file
 * cannot be opened (full disk, unwritable directory), so that the loops run from the config
 * and commands still have somewhere to go. Nothing in it survives the process; the store
 * supervisor copies it into the file once that opens.
 */
export function openStandIn(logger: Logger): Database.Database {
  const db = new Database(':memory:');
  prepare(db, ':memory:', logger, false);
  return db;
}
