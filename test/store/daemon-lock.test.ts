import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import {
  currentOwner,
  DaemonLock,
  DatabaseLockedError,
  describeHeldLock,
  lockPathFor,
  ownerPathFor,
  probeLock,
  readLockOwner,
} from '../../src/store/daemon-lock.js';
import { openStore, openStoreReadOnly } from '../../src/store/database.js';
import { tempDir } from '../support/tmp.js';

const OWNER = {
  pid: process.pid,
  host: os.hostname(),
  startedAt: '2026-11-30T16:00:00.000Z',
  nodeId: 'greenhouse',
};
const moduleUrl = new URL('../../src/store/daemon-lock.ts', import.meta.url).href;
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `fn` with the process umask set to `mask`. */
function withUmask<T>(mask: number, fn: () => T): T {
  const previous = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}

/** Whether acquiring `dbPath` now is refused (and with which error). */
function refusal(dbPath: string): DatabaseLockedError | undefined {
  try {
    DaemonLock.acquire(dbPath, { ...OWNER, nodeId: 'second' }).release();
    return undefined;
  } catch (error) {
    assert.ok(error instanceof DatabaseLockedError, String(error));
    return error;
  }
}

/** A child process holding the lock of `dbPath` until killed; resolves once it holds it. */
async function holdInChild(dbPath: string, nodeId: string) {
  const script = `const { DaemonLock, currentOwner } = await import(${JSON.stringify(moduleUrl)});
DaemonLock.acquire(${JSON.stringify(dbPath)}, currentOwner(${JSON.stringify(nodeId)}));
process.stdout.write('held\\n');
setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const kill9 = () => {
    child.kill('SIGKILL');
    return exited;
  };
  return { pid: child.pid as number, kill9 };
}

/** Whether another process is granted `dbPath`'s lock now (it releases it again at once). */
async function grantedInChild(dbPath: string): Promise<boolean> {
  const script = `const { DaemonLock, currentOwner } = await import(${JSON.stringify(moduleUrl)});
try { DaemonLock.acquire(${JSON.stringify(dbPath)}, currentOwner('child')).release(); process.stdout.write('granted'); }
catch (error) { process.stdout.write(error.name === 'DatabaseLockedError' ? 'refused' : String(error)); }`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  assert.match(out, /^(granted|refused)$/);
  return out === 'granted';
}

describe('DaemonLock', () => {
  test('given a free database, when acquired, then the lock and owner files are 0640 and the owner is recorded', (t) => {
    const dbPath = path.join(tempDir(t), 'state', 'homeostat.db');
    const lock = withUmask(0o027, () => DaemonLock.acquire(dbPath, OWNER));
    t.after(() => lock.release());
    assert.deepEqual(readLockOwner(dbPath), OWNER);
    for (const file of [lockPathFor(dbPath), ownerPathFor(dbPath)]) {
      assert.equal(fs.statSync(file).mode & 0o777, 0o640, file);
    }
    assert.deepEqual(
      fs.readdirSync(path.dirname(dbPath)).sort(),
      ['homeostat.db.lock', 'homeostat.db.owner'],
      'no journal nor temp file beside them',
    );
  });

  test('given a lock held in this process, when acquired again, then it is refused with a message naming the holder', (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    const error = refusal(dbPath);
    assert.ok(error, 'a second connection of the same process conflicts too');
    assert.deepEqual(error.owner, OWNER);
    assert.equal(
      error.message,
      `another homeostat is already running on ${dbPath}: pid ${process.pid} on ${os.hostname()}, since 2026-11-30T16:00:00.000Z, node id greenhouse; stop it first (sudo systemctl stop homeostat), or give this one its own database with --db`,
    );
    assert.doesNotMatch(error.message, /\n/, 'one line');
  });

  test('given a lock held in this process and a second acquire here refused, then another process is still refused', async (t) => {
    // Closing any descriptor of the lock file would drop this process's POSIX lock on it.
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    assert.ok(refusal(dbPath));
    assert.equal(await grantedInChild(dbPath), false, 'the lock is still held for other processes');
    assert.equal(lock.held, true);
    lock.release();
    assert.equal(await grantedInChild(dbPath), true, 'released: another process gets it');
  });

  test('given a released lock, when acquired, then it is granted and the old owner record is gone', (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    const first = DaemonLock.acquire(dbPath, OWNER);
    first.release();
    first.release(); // twice is harmless
    assert.equal(first.held, false);
    assert.equal(fs.existsSync(ownerPathFor(dbPath)), false, 'the record goes with the lock');
    assert.equal(refusal(dbPath), undefined);
  });

  test('given a holder in this process that no longer counts as running, when acquired, then it is taken over', (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    let running = true;
    const first = DaemonLock.acquire(dbPath, OWNER, () => running);
    assert.ok(refusal(dbPath), 'refused while it runs');
    running = false;
    const second = DaemonLock.acquire(dbPath, { ...OWNER, nodeId: 'second' });
    t.after(() => second.release());
    assert.equal(first.held, false, 'the dead holder lost it');
    assert.equal(readLockOwner(dbPath)?.nodeId, 'second');
  });

  test('given another process holding it, when acquired, then refused; once that process is killed (-9), granted', async (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    const holder = await holdInChild(dbPath, 'other-node');
    t.after(() => holder.kill9());
    const error = refusal(dbPath);
    assert.ok(error);
    assert.equal(error.owner?.pid, holder.pid);
    assert.match(error.message, new RegExp(`pid ${holder.pid} on .*node id other-node`));
    await holder.kill9();
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    assert.equal(readLockOwner(dbPath)?.pid, process.pid, 'the stale record was replaced');
  });

  test('given the lock held, when the CLI reads the database, then it is neither blocked nor locking', (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    const { db } = openStore({ path: dbPath, logger: pino({ level: 'silent' }), nowMs: () => 0 });
    t.after(() => db.close());
    const reader = openStoreReadOnly(dbPath);
    assert.ok(reader.prepare('SELECT count(*) AS n FROM events').get());
    reader.close();
  });

  test('given a lock file that is not a database, when acquired, then it is reset and granted', (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    fs.writeFileSync(lockPathFor(dbPath), 'x'.repeat(4096));
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    assert.ok(refusal(dbPath));
  });

  test('given a directory that cannot be created, when acquired, then an Error names the path (not a refusal)', (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'file'), '');
    const dbPath = path.join(dir, 'file', 'homeostat.db');
    assert.throws(
      () => DaemonLock.acquire(dbPath, OWNER),
      (error: Error) => !(error instanceof DatabaseLockedError) && /ENOTDIR|EEXIST/.test(error.message),
    );
  });
});

describe('probeLock', () => {
  test('given no lock file, a released lock, a held lock (here and in another process), then it says so without taking it', async (t) => {
    const dbPath = path.join(tempDir(t), 'homeostat.db');
    assert.deepEqual(probeLock(dbPath), { held: false }, 'no lock file');
    assert.equal(fs.existsSync(lockPathFor(dbPath)), false, 'and none created');
    const lock = DaemonLock.acquire(dbPath, OWNER);
    const held = probeLock(dbPath);
    assert.equal(held.held, true);
    assert.deepEqual(held.held && held.owner, OWNER);
    lock.release();
    assert.deepEqual(probeLock(dbPath), { held: false });
    const other = await holdInChild(dbPath, 'other-node');
    t.after(() => other.kill9());
    const probe = probeLock(dbPath);
    assert.ok(probe.held && probe.owner?.pid === other.pid, JSON.stringify(probe));
    assert.match(probe.held ? probe.message : '', /node id other-node/);
    // The probe took nothing: the holder keeps it, and it is free once the holder is gone.
    assert.ok(refusal(dbPath));
    await other.kill9();
    assert.deepEqual(probeLock(dbPath), { held: false });
  });
});

describe('DaemonLock as root', () => {
  test("given a state directory owned by the service user, when root takes the lock (sudo homeostat run), then its files are the service user's", (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root');
    const dir = path.join(tempDir(t), 'state');
    fs.mkdirSync(dir);
    fs.chownSync(dir, 61_234, 61_235);
    const dbPath = path.join(dir, 'homeostat.db');
    const lock = DaemonLock.acquire(dbPath, OWNER);
    t.after(() => lock.release());
    for (const file of [lockPathFor(dbPath), ownerPathFor(dbPath)]) {
      const { uid, gid } = fs.statSync(file);
      assert.deepEqual({ uid, gid }, { uid: 61_234, gid: 61_235 }, file);
    }
  });
});

describe('describeHeldLock', () => {
  const dbPath = '/var/lib/homeostat/homeostat.db';
  const unknown =
    'another homeostat is already running on /var/lib/homeostat/homeostat.db (it holds /var/lib/homeostat/homeostat.db.lock; no current owner record in /var/lib/homeostat/homeostat.db.owner): stop it first (sudo systemctl stop homeostat), or give this one its own database with --db';
  const table: Array<
    [what: string, owner: Parameters<typeof describeHeldLock>[1], expected: RegExp | string]
  > = [
    ['no record', undefined, unknown],
    ['a record naming a process of this host that is gone', { ...OWNER, pid: 2 ** 22 + 1 }, unknown],
    [
      'a record from another host (cannot be checked)',
      { ...OWNER, host: 'other-pi', pid: 2 ** 22 + 1 },
      /pid 4194305 on other-pi, since/,
    ],
    [
      'a record naming a live process',
      currentOwner('n1', Date.UTC(2026, 0, 1)),
      /pid \d+ on .*, since 2026-01-01T00:00:00.000Z, node id n1;/,
    ],
  ];
  for (const [what, owner, expected] of table) {
    test(`given ${what}, then the message is as expected`, () => {
      const message = describeHeldLock(dbPath, owner);
      if (typeof expected === 'string') assert.equal(message, expected);
      else assert.match(message, expected);
    });
  }
});
