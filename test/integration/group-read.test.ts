/**
 * The database is readable by members of the daemon's group without sudo, as on an
 * installed Pi: the daemon runs as its own user under the unit's UMask=0027 in a 0750 state
 * directory it cannot share otherwise, and a person in its group runs `homeostat status --db`.
 *
 * What SQLite needs of such a reader (found here): read access to the file and, in WAL mode,
 * to its -wal and -shm; no write access to anything — since 3.22 a reader that can only open
 * the -shm read-only still reads, also after the daemon was killed. What it cannot do is
 * create a missing -shm (the directory is not the group's to write), and SQLite deletes the
 * -shm at the daemon's last close: so a clean stop leaves the file in rollback-journal mode
 * (store/database.ts closeStore), which a reader reads with nothing beside it.
 *
 * Needs root (to run processes as other users); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { DATABASE_IN_USE_EXIT_CODE } from '../../src/commands/run.js';
import { demoConfigText, makeTempDir, REPO_ROOT, waitUntil } from './helpers.js';

/** Made-up ids: the kernel needs no passwd entry. */
const DAEMON_UID = 61_234;
const GROUP_GID = 61_235;
/** `nobody`, given the daemon's group as its group (spawn sets no supplementary groups). */
const READER_UID = 65_534;
const OTHER_GID = 65_534;

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** `homeostat run` as the daemon user, umask 0027 as the unit sets it; resolves once regulating. */
async function startDaemonAs(configPath: string, dbPath: string) {
  const command = `umask 0027 && exec "${process.execPath}" --import tsx src/cli.ts run --config "${configPath}" --db "${dbPath}" --speed 60 --log-format json --http-port off`;
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: REPO_ROOT,
    uid: DAEMON_UID,
    gid: GROUP_GID,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitUntil(() => output.includes('"msg":"homeostat regulating') || child.exitCode !== null, {
    what: 'the daemon regulating',
    timeoutMs: 30_000,
  });
  assert.equal(child.exitCode, null, output);
  // The config applied and written: WAL frames in the -wal, the -shm in use, the safe manifest.
  const stateFiles = ['-wal', '-shm', '.safe.json'].map((suffix) => `${dbPath}${suffix}`);
  await waitUntil(
    () => stateFiles.every((file) => fs.existsSync(file)) && fs.statSync(`${dbPath}-wal`).size > 0,
    { what: 'the -wal, -shm and safe manifest written', timeoutMs: 30_000 },
  );
  return {
    output: () => output,
    stop: async (signal: NodeJS.Signals) => {
      child.kill(signal);
      const code = await exited;
      children.delete(child);
      return code;
    },
  };
}

/** `homeostat status --db … --json` as `uid`:`gid`; resolves with its exit code and output. */
function statusAs(uid: number, gid: number, dbPath: string): Promise<{ code: number | null; out: string }> {
  return cliAs(uid, gid, ['status', '--db', dbPath, '--json']);
}

/** `homeostat ARGS` as `uid`:`gid`; killed after 30 s (a daemon that was not refused). */
function cliAs(uid: number, gid: number, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: REPO_ROOT,
      uid,
      gid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', () => clearTimeout(timer));
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('exit', (code) => {
      children.delete(child);
      resolve({ code, out });
    });
  });
}

const modes = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((name) => name.startsWith('homeostat.db'))
      .map((name) => {
        const stat = fs.statSync(path.join(dir, name));
        return [name, `${(stat.mode & 0o777).toString(8)} ${stat.uid}:${stat.gid}`];
      }),
  );

async function assertGroupReads(dbPath: string, when: string): Promise<void> {
  const member = await statusAs(READER_UID, GROUP_GID, dbPath);
  assert.equal(member.code, 0, `${when}: a member of the group reads it:\n${member.out}`);
  assert.match(member.out, /"loop":\s*"room"/, `${when}: with every loop`);
  const stranger = await statusAs(READER_UID, OTHER_GID, dbPath);
  assert.notEqual(stranger.code, 0, `${when}: someone outside the group cannot:\n${stranger.out}`);
}

/** A demo config and a state directory as an installed Pi has them; removed after the test. */
function daemonHome(t: TestContext) {
  const temp = makeTempDir('homeostat-group-read-');
  t.after(temp.remove);
  // The temp dir: anyone may pass through (as /var/lib is); the state directory is the daemon's
  // own, 0750, as systemd's StateDirectory= or the installer make it.
  fs.chmodSync(temp.dir, 0o711);
  const stateDir = path.join(temp.dir, 'state');
  fs.mkdirSync(stateDir, { mode: 0o750 });
  fs.chownSync(stateDir, DAEMON_UID, GROUP_GID);
  const configPath = path.join(temp.dir, 'config.yaml');
  fs.writeFileSync(
    configPath,
    demoConfigText((doc) => doc.delete('mqtt')),
    { mode: 0o644 },
  );
  return { stateDir, configPath, dbPath: path.join(stateDir, 'homeostat.db') };
}

test('given the daemon running as its own user under UMask=0027, then a member of its group reads the database (running, after a clean stop, after kill -9) and nobody else does', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to run processes as other users');
  const { stateDir, configPath, dbPath } = daemonHome(t);
  const owned = `${DAEMON_UID}:${GROUP_GID}`;

  // While it runs: WAL, with its -wal and -shm, all 0640, the daemon's.
  let daemon = await startDaemonAs(configPath, dbPath);
  assert.deepEqual(modes(stateDir), {
    'homeostat.db': `640 ${owned}`,
    'homeostat.db-shm': `640 ${owned}`,
    'homeostat.db-wal': `640 ${owned}`,
    'homeostat.db.lock': `640 ${owned}`,
    'homeostat.db.owner': `640 ${owned}`,
    // The last applied config for `homeostat safe` (src/safe/manifest.ts): kept after a stop.
    'homeostat.db.safe.json': `640 ${owned}`,
  });
  await assertGroupReads(dbPath, 'running');

  // A member of the group starting a daemon by hand on it: it cannot write the lock file, but it
  // reads that the service holds it, and is refused as any second daemon is.
  const second = await cliAs(READER_UID, GROUP_GID, [
    'run',
    '--config',
    configPath,
    '--db',
    dbPath,
    '--speed',
    '60',
    '--log-format',
    'json',
    '--http-port',
    'off',
  ]);
  assert.equal(second.code, DATABASE_IN_USE_EXIT_CODE, second.out);
  assert.match(second.out, /another homeostat is already running on .*homeostat\.db: pid \d+/);

  // After a clean stop: nothing beside the file (no -shm to open, none can be created).
  assert.equal(await daemon.stop('SIGTERM'), 0, daemon.output());
  assert.deepEqual(modes(stateDir), {
    'homeostat.db': `640 ${owned}`,
    'homeostat.db.lock': `640 ${owned}`,
    'homeostat.db.safe.json': `640 ${owned}`,
  });
  await assertGroupReads(dbPath, 'stopped');
  assert.deepEqual(
    Object.keys(modes(stateDir)),
    ['homeostat.db', 'homeostat.db.lock', 'homeostat.db.safe.json'],
    'the reads left nothing',
  );

  // After kill -9: the -wal and -shm stay, readable; the reader uses the -shm read-only.
  daemon = await startDaemonAs(configPath, dbPath);
  await daemon.stop('SIGKILL');
  assert.ok(fs.existsSync(`${dbPath}-shm`) && fs.existsSync(`${dbPath}-wal`), 'left by the crash');
  await assertGroupReads(dbPath, 'killed');
});

/**
 * The state a daemon killed in its first second on a WAL it had just started can leave (seen
 * under load): the WAL's 32-byte header written, the WAL index initialised and empty. A reader
 * that cannot write the -shm then gets SQLITE_PROTOCOL at every read until a writer opens the
 * file. These are the bytes such a kill left (a database of 512-byte pages, as homeostat's).
 */
const WAL_HEADER_ONLY = '377f0682002de21800000200000000008c68d914de20f529e9a46b9fcb736422';
/** The WAL index header (SQLite keeps two copies of it), then its checkpoint information. */
const INDEX_HEADER =
  '18e22d00000000000000000001000000000000000000000000000000000000000000000000000000380718063593db09';
const CHECKPOINT_INFO = '000000000000000000000000ffffffffffffffffffffffff00000000000000000000000000000000';
const SHM_INDEX_HEADER = `${INDEX_HEADER}${INDEX_HEADER}${CHECKPOINT_INFO}`;
const SHM_BYTES = 32_768;

test('given a daemon killed before its WAL index was filled in, then a member of its group still reads the database (from a private recovered copy, deleted after)', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to run processes as other users');
  const { stateDir, configPath, dbPath } = daemonHome(t);
  const daemon = await startDaemonAs(configPath, dbPath);
  assert.equal(await daemon.stop('SIGTERM'), 0, daemon.output());
  // The file back in WAL mode with no WAL frame, then the -wal and -shm as the kill left them.
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.close();
  const shm = Buffer.alloc(SHM_BYTES);
  Buffer.from(SHM_INDEX_HEADER, 'hex').copy(shm);
  for (const [suffix, bytes] of [
    ['-wal', Buffer.from(WAL_HEADER_ONLY, 'hex')],
    ['-shm', shm],
  ] as const) {
    fs.writeFileSync(`${dbPath}${suffix}`, bytes, { mode: 0o640 });
    fs.chownSync(`${dbPath}${suffix}`, DAEMON_UID, GROUP_GID);
  }
  const copiesBefore = readCopies();
  await assertGroupReads(dbPath, 'killed before its WAL index was filled in');
  assert.deepEqual(readCopies(), copiesBefore, 'the private copies are deleted');
  assert.deepEqual(fs.readFileSync(`${dbPath}-shm`), shm, 'the daemon’s files are left as they were');
  assert.ok(fs.readdirSync(stateDir).includes('homeostat.db-wal'));
});

/** The private copies of readers in the temporary directory (src/store/recovered-copy.ts). */
const readCopies = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('homeostat-read-'));
