/**
 * `homeostat backup` while the daemon runs and setpoints pour in through the API: the archive
 * is one consistent moment of the database. Restored, it passes SQLite's integrity check, holds
 * at least every change acknowledged before the backup began, and its (generation, setpoint)
 * is one the daemon acknowledged: never a setpoint of one write with the generation of another.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { postJson } from '../http/support.js';
import { minimalSimConfigText } from '../support/config.js';
import { makeTempDir, runCli, startDaemon, withReadOnlyDb } from './helpers.js';

interface Acknowledged {
  generation: number;
  setpoint: number;
}

/** Posts setpoints one after another until `stop()`; keeps each accepted answer. */
function flood(base: string) {
  const acknowledged: Acknowledged[] = [];
  let refused = 0;
  let stopping = false;
  let reached: { count: number; resolve: () => void } | undefined;
  const done = (async () => {
    for (let i = 0; !stopping; i += 1) {
      const setpoint = 10 + (i % 150) / 10;
      const answer = await postJson<{ accepted: boolean; generation?: number }>(base, '/api/loops/room', {
        setpoint,
      });
      // 429: the loop's change limit (10 at once, 30 a minute) refused it; nothing was stored.
      assert.ok(answer.status === 200 || answer.status === 429, JSON.stringify(answer.body));
      if (answer.body.accepted && answer.body.generation !== undefined) {
        acknowledged.push({ generation: answer.body.generation, setpoint });
        if (reached && acknowledged.length >= reached.count) reached.resolve();
      } else refused += 1;
    }
  })();
  return {
    acknowledged,
    refusedCount: () => refused,
    /** Resolves once `count` writes have been acknowledged. */
    acknowledgedAtLeast: (count: number) =>
      new Promise<void>((resolve) => {
        if (acknowledged.length >= count) resolve();
        else reached = { count, resolve };
      }),
    stop: async () => {
      stopping = true;
      await done;
    },
  };
}

test('given setpoints pouring in through the API, when backed up mid-flood and restored, then the database is whole and holds an acknowledged state no older than the backup’s start', {
  timeout: 120_000,
}, async (t) => {
  const temp = makeTempDir('homeostat-backup-flood-');
  t.after(temp.remove);
  const configPath = path.join(temp.dir, 'config.yaml');
  writeFileSync(configPath, minimalSimConfigText({ nodeId: 'cellar' }));
  const dbPath = path.join(temp.dir, 'homeostat.db');
  const daemon = startDaemon({ configPath, dbPath });
  t.after(() => daemon.kill('SIGKILL'));
  const listening = await daemon.waitForLine(/^dashboard and API at /, 30_000);
  const base = String(listening.url).replace(/\/$/, '');

  // Given a flood under way …
  const writes = flood(base);
  await writes.acknowledgedAtLeast(20);
  // … when a backup is taken while it goes on …
  const acknowledgedBeforeBackup = Math.max(...writes.acknowledged.map((w) => w.generation));
  const archivePath = path.join(temp.dir, 'mid-flood.tar.gz');
  const backup = await runCli(['backup', archivePath, '--config', configPath, '--db', dbPath], 60_000);
  const acknowledgedDuringBackup = writes.acknowledged.length;
  await writes.stop();
  assert.equal(backup.code, 0, backup.stderr);
  assert.equal((await daemon.kill('SIGTERM')).code, 0, daemon.output);

  // … then restored elsewhere, it is whole and one of the acknowledged states.
  const restoredDb = path.join(temp.dir, 'restored', 'homeostat.db');
  const restoredConfig = path.join(temp.dir, 'restored', 'config.yaml');
  const restore = await runCli(['restore', archivePath, '--db', restoredDb, '--config', restoredConfig]);
  assert.equal(restore.code, 0, restore.stderr);
  const restored = withReadOnlyDb(restoredDb, (db) => ({
    integrity: db.pragma('integrity_check', { simple: true }),
    room: db
      .prepare("SELECT generation, setpoint FROM loop_desired WHERE loop = 'room'")
      .get() as Acknowledged,
  }));
  assert.equal(restored.integrity, 'ok');
  assert.ok(
    restored.room.generation >= acknowledgedBeforeBackup,
    `restored generation ${restored.room.generation}, ${acknowledgedBeforeBackup} was acknowledged before the backup began`,
  );
  assert.deepEqual(
    writes.acknowledged.find((w) => w.generation === restored.room.generation),
    restored.room,
    'the restored (generation, setpoint) is one the daemon acknowledged',
  );
  assert.ok(
    acknowledgedDuringBackup > 20,
    `the flood went on during the backup (${acknowledgedDuringBackup} acknowledged, ${writes.refusedCount()} refused by the rate limit)`,
  );
  assert.match(backup.stdout, /^backup written: .*mid-flood\.tar\.gz \(\d+ kB\): node cellar, /);
});
