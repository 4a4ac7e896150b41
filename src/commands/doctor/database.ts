/** Doctor check 5: the database file and its directory. */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { CheckResult } from '../../kinds/types.js';
import { probeLock } from '../../store/daemon-lock.js';
import { type CanWrite, canWriteFs, messageOf } from './shared.js';

const NAME = 'database';

const CORRUPT_FIX =
  'the file is damaged: restart homeostat, which moves it aside and starts a fresh one from the config ' +
  '(runtime setpoints and history are lost), or restore a backup';

/**
 * The database's directory is writable (or, if it does not exist yet, the nearest existing
 * ancestor, since the daemon creates it), and an existing file opens and passes
 * `PRAGMA quick_check`. Nothing is written, migrated or moved aside, so a running daemon is
 * not disturbed.
 */
export async function checkDatabase(
  dbPath: string,
  deps: { canWrite?: CanWrite } = {},
): Promise<CheckResult> {
  const name = NAME;
  const canWrite = deps.canWrite ?? canWriteFs;
  const dir = await nearestExisting(dirname(dbPath));
  const permissionFix =
    `make ${dirname(dbPath)} and ${dbPath} writable by the user running homeostat ` +
    '(with systemd: StateDirectory=homeostat), or choose another path with --db';
  if (!(await canWrite(dir))) {
    return { name, status: 'fail', detail: `${dir} is not writable by this user`, fix: permissionFix };
  }
  if (!(await exists(dbPath))) {
    return { name, status: 'ok', detail: `${dbPath} does not exist yet; ${dir} is writable` };
  }
  if (!(await canWrite(dbPath))) {
    return { name, status: 'fail', detail: `${dbPath} is not writable by this user`, fix: permissionFix };
  }
  return quickCheck(dbPath, permissionFix);
}

/** Opens the existing file without writing to it and runs `PRAGMA quick_check`. */
async function quickCheck(dbPath: string, permissionFix: string): Promise<CheckResult> {
  const name = NAME;
  let db: Database.Database | undefined;
  try {
    // With the daemon running (its -wal exists), read-only: WAL lets a reader in beside it.
    // Without, a read-only connection would leave a -wal and -shm behind (it may not
    // checkpoint), owned by whoever ran doctor, maybe root, which the daemon then cannot
    // open; a read-write connection that writes nothing removes them when it closes.
    const daemonFiles = await exists(`${dbPath}-wal`);
    db = new Database(dbPath, { readonly: daemonFiles, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
    const problems = rows.map((row) => row.quick_check).filter((line) => line !== 'ok');
    if (problems.length > 0) {
      return {
        name,
        status: 'fail',
        detail: `${dbPath}: quick_check: ${problems.slice(0, 3).join('; ')}`,
        fix: CORRUPT_FIX,
      };
    }
    return { name, status: 'ok', detail: `${dbPath} opens, quick_check ok${inUseBy(dbPath)}` };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const corrupt = typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
    return {
      name,
      status: 'fail',
      detail: `${dbPath}: ${messageOf(error)}`,
      fix: corrupt ? CORRUPT_FIX : permissionFix,
    };
  } finally {
    db?.close();
  }
}

/** `; in use by homeostat pid …` when a daemon holds the database's lock (doctor takes nothing). */
function inUseBy(dbPath: string): string {
  const probe = probeLock(dbPath);
  if (!probe.held) return '; no daemon running on it';
  const owner = probe.owner;
  return owner
    ? `; in use by homeostat pid ${owner.pid} on ${owner.host} (node id ${owner.nodeId}, since ${owner.startedAt})`
    : '; in use by a homeostat daemon';
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function nearestExisting(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    const found = await exists(current);
    const parent = dirname(current);
    if (found || parent === current) return current;
    current = parent;
  }
}
