import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { makeDirs } from '../make-dirs.js';
import { errorCode, STORE_DIR_MODE, STORE_FILE_MODE } from './database.js';

/**
 * One daemon per database. Two daemons on one file would both write it (each believing its
 * memory), and both drive the same relays.
 *
 * The lock is an OS lock, so that any death of its holder releases it (kill -9, out of memory,
 * power loss): a pid file alone would outlive a crash and need guessing whether its pid is still
 * ours. Node has no flock, but SQLite's unix VFS holds POSIX advisory locks (fcntl), which the
 * kernel drops with the process: `<db>.lock` is a tiny SQLite file held with
 * `locking_mode=EXCLUSIVE` and an exclusive transaction, so SQLite keeps its EXCLUSIVE lock until
 * the connection closes. Another process, and another connection in this process (SQLite tracks
 * POSIX locks per inode within a process), gets SQLITE_BUSY at once.
 *
 * The database itself is not locked: the CLI's read-only commands (status, history, events,
 * plan, doctor) read it as before and never meet this lock.
 *
 * Who holds it is in `<db>.owner` (JSON), written after acquiring: a file exclusively locked by
 * SQLite cannot be read by anyone else, so the record lives beside it. It may be missing or
 * stale (the holder died before writing it, or a crashed holder's record outlived it): the lock
 * is the truth, the record only names the holder.
 */

/** Who runs the daemon that holds the lock, as recorded in `<db>.owner`. */
export interface LockOwner {
  pid: number;
  host: string;
  /** ISO time the daemon started. */
  startedAt: string;
  /** The config's node.id. */
  nodeId: string;
}

/** The lock file beside the database. */
export function lockPathFor(dbPath: string): string {
  return `${dbPath}.lock`;
}

/** The owner record beside the database. */
export function ownerPathFor(dbPath: string): string {
  return `${dbPath}.owner`;
}

/** Another daemon holds the database: the message names it and the fix. */
export class DatabaseLockedError extends Error {
  constructor(
    readonly dbPath: string,
    readonly owner: LockOwner | undefined,
  ) {
    super(describeHeldLock(dbPath, owner));
    this.name = 'DatabaseLockedError';
  }
}

/** In this process, the holder of each lock file, and whether its node still counts as running. */
const heldHere = new Map<string, DaemonLock>();

/** How long a start waits on a busy lock file (see tryLock). */
const LOCK_WAIT_MS = 200;

/**
 * The lock of one daemon on one database, held from `acquire` until `release` (or the end of
 * the process).
 */
export class DaemonLock {
  private db: Database.Database | undefined;

  private constructor(
    readonly dbPath: string,
    db: Database.Database,
    private readonly key: string,
    private readonly alive: () => boolean,
  ) {
    this.db = db;
  }

  /**
   * Takes the lock of `dbPath` for `owner` and records the owner. Throws DatabaseLockedError when
   * another daemon holds it, and an Error naming the file for anything else (a directory that
   * cannot be created or written, a full disk while creating the file).
   *
   * `alive`: whether the node holding it still counts as running. Only used between nodes of
   * one process (tests): a holder whose `alive()` is false is taken over, as if its process
   * had died. A node passes "its store's database is open", which is false only after the store
   * was closed without stopping the node (how tests simulate a crash).
   */
  static acquire(dbPath: string, owner: LockOwner, alive: () => boolean = () => true): DaemonLock {
    const lockPath = lockPathFor(dbPath);
    // Held in this process: decided before any file is opened here, because closing any
    // descriptor of a file drops every POSIX lock this process holds on it (createWithMode's
    // close would hand the lock to the next process that asks).
    const holder = fs.existsSync(lockPath) ? heldHere.get(fs.realpathSync(lockPath)) : undefined;
    if (holder?.held) {
      if (holder.alive()) throw new DatabaseLockedError(dbPath, readLockOwner(dbPath));
      holder.release();
    }
    makeDirs(path.dirname(lockPath), STORE_DIR_MODE);
    createWithMode(lockPath, dbPath);
    const key = fs.realpathSync(lockPath);
    const db = tryLock(lockPath);
    if (db === undefined) throw new DatabaseLockedError(dbPath, readLockOwner(dbPath));
    const lock = new DaemonLock(dbPath, db, key, alive);
    heldHere.set(key, lock);
    writeOwner(ownerPathFor(dbPath), owner, dbPath);
    return lock;
  }

  /** Whether this lock is still held (false after `release`). */
  get held(): boolean {
    return this.db !== undefined;
  }

  /** Removes the owner record and releases the lock. Safe to call twice. */
  release(): void {
    const db = this.db;
    if (!db) return;
    this.db = undefined;
    if (heldHere.get(this.key) === this) heldHere.delete(this.key);
    // Before the lock goes: once released, the record may already be the next holder's.
    try {
      fs.rmSync(ownerPathFor(this.dbPath), { force: true });
    } catch {
      // A stale record is harmless: the lock is the truth.
    }
    try {
      db.close();
    } catch {
      // Closing releases the POSIX lock even when it reports an error.
    }
  }
}

/**
 * The lock file, created 0640 (less the umask) like the database when it does not exist. Made
 * by root (`sudo homeostat run`), it is given to the owner of the database (or of its
 * directory), as SQLite does with the -wal and -shm: else the service's user could not open it
 * afterwards.
 */
function createWithMode(lockPath: string, dbPath: string): void {
  const fd = fs.openSync(lockPath, fs.constants.O_RDWR | fs.constants.O_CREAT, STORE_FILE_MODE);
  try {
    giveToDatabaseOwner(fd, dbPath);
  } finally {
    fs.closeSync(fd);
  }
}

/** As root: `fd` is chowned to the owner of `dbPath`, or of its directory while it has none. */
function giveToDatabaseOwner(fd: number, dbPath: string): void {
  if (process.getuid?.() !== 0) return;
  let owner: fs.Stats;
  try {
    owner = fs.statSync(fs.existsSync(dbPath) ? dbPath : path.dirname(dbPath));
  } catch {
    return;
  }
  const mine = fs.fstatSync(fd);
  if (mine.uid !== owner.uid || mine.gid !== owner.gid) fs.fchownSync(fd, owner.uid, owner.gid);
}

/** The connection holding the lock, or undefined when another connection holds it. */
function tryLock(lockPath: string): Database.Database | undefined {
  // A short wait only: a holder never lets go, but a probe (`safe`, `doctor`) takes a shared
  // lock for a moment, and a start landing in that moment must not be refused for it.
  const db = new Database(lockPath, { timeout: LOCK_WAIT_MS });
  try {
    // Held until the connection closes: EXCLUSIVE locking mode never gives a lock back.
    db.pragma('locking_mode = EXCLUSIVE');
    // No -journal file beside it: the only write is the header of an empty file, once.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return db;
  } catch (error) {
    db.close();
    const code = errorCode(error);
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return undefined;
    if (code?.startsWith('SQLITE_NOTADB') || code?.startsWith('SQLITE_CORRUPT')) {
      // Not a database (someone wrote into it): nobody can hold it as one, so it is ours to
      // reset. An empty file is a valid empty database.
      fs.truncateSync(lockPath, 0);
      return tryLock(lockPath);
    }
    throw new Error(`cannot take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
  }
}

/** Written beside, then renamed: a reader never sees half a record. */
function writeOwner(ownerPath: string, owner: LockOwner, dbPath: string): void {
  const temp = `${ownerPath}.${process.pid}.tmp`;
  try {
    const fd = fs.openSync(temp, 'w', STORE_FILE_MODE);
    try {
      fs.writeFileSync(fd, `${JSON.stringify(owner)}\n`);
      giveToDatabaseOwner(fd, dbPath);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, ownerPath);
  } catch {
    // Full disk: the lock holds all the same; a refused daemon then says the owner is unknown.
    fs.rmSync(temp, { force: true });
  }
}

/** What {@link probeLock} found. */
export type LockProbe = { held: false } | { held: true; owner: LockOwner | undefined; message: string };

/**
 * Whether a daemon holds `dbPath`'s lock now, without taking it or creating anything: for
 * `doctor`, and for `safe`, which must not drive the relays of a daemon that is running (as
 * the unit's ExecStopPost after a start refused because another one holds the database).
 * Reads with a read-only connection: a shared lock for a moment, refused while a daemon holds
 * its exclusive one. No lock file, or one that cannot be read: not held (as far as is known).
 */
export function probeLock(dbPath: string): LockProbe {
  const lockPath = lockPathFor(dbPath);
  let db: Database.Database;
  try {
    db = new Database(lockPath, { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return { held: false };
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return { held: false };
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') return { held: false };
    const owner = readLockOwner(dbPath);
    return { held: true, owner, message: describeHeldLock(dbPath, owner) };
  } finally {
    db.close();
  }
}

/** The recorded holder of `dbPath`'s lock, or undefined when there is no readable record. */
export function readLockOwner(dbPath: string): LockOwner | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(ownerPathFor(dbPath), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { pid, host, startedAt, nodeId } = parsed as Record<string, unknown>;
  if (typeof pid !== 'number' || typeof host !== 'string') return undefined;
  return {
    pid,
    host,
    startedAt: typeof startedAt === 'string' ? startedAt : '?',
    nodeId: typeof nodeId === 'string' ? nodeId : '?',
  };
}

/** This process as a lock owner. */
export function currentOwner(nodeId: string, startedAtMs: number = Date.now()): LockOwner {
  return { pid: process.pid, host: os.hostname(), startedAt: new Date(startedAtMs).toISOString(), nodeId };
}

/**
 * One line: who holds the database and what to do. A record naming a process of this host that
 * no longer exists is said to be stale (the holder is then one that did not write its record).
 */
export function describeHeldLock(dbPath: string, owner: LockOwner | undefined): string {
  const fix = 'stop it first (sudo systemctl stop homeostat), or give this one its own database with --db';
  if (owner === undefined || isGone(owner)) {
    return `another homeostat is already running on ${dbPath} (it holds ${lockPathFor(dbPath)}; no current owner record in ${ownerPathFor(dbPath)}): ${fix}`;
  }
  return `another homeostat is already running on ${dbPath}: pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}, node id ${owner.nodeId}; ${fix}`;
}

/** True only when `owner` names a process of this host that does not exist. */
function isGone(owner: LockOwner): boolean {
  if (owner.host !== os.hostname() || !Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    // EPERM: it exists, as another user.
    return errorCode(error) === 'ESRCH';
  }
}
