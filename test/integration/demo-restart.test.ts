/**
 * `npm start` twice on one database (`--speed 60`, as the demo runs): the second run's simulated
 * time goes on from where the first got to, so its records never interleave with the first's
 * (the charts drew both hours on top of each other, the setpoint as a solid block).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { minimalSimConfigText } from '../support/config.js';
import { makeTempDir, startDaemon, withReadOnlyDb } from './helpers.js';

const latestSample = (dbPath: string) =>
  withReadOnlyDb(dbPath, (db) => {
    const row = db.prepare('SELECT max(rowid) AS id, max(until_ms) AS until FROM samples').get() as {
      id: number;
      until: number;
    };
    return row;
  });

test('given a demo that ran ahead of the wall clock, when it starts again on its database, then its time goes on from there', async (t) => {
  const temp = makeTempDir('homeostat-demo-restart-');
  t.after(temp.remove);
  const configPath = path.join(temp.dir, 'demo.yaml');
  writeFileSync(configPath, minimalSimConfigText());
  const dbPath = path.join(temp.dir, 'demo.db');

  // Given a first run, stopped after a few simulated minutes …
  const first = startDaemon({ configPath, dbPath });
  await first.waitForLine(/^homeostat regulating 1 loop\(s\)/);
  await first.waitForLine((line) => line.msg.startsWith('room '));
  assert.equal((await first.kill('SIGTERM')).code, 0, first.output);
  const before = latestSample(dbPath);
  // At --speed 60 each second it ran put it a minute ahead: well ahead of the restart below.
  assert.ok(before.until > Date.now() + 10_000, 'the first run got ahead of the wall clock');

  // … when a second starts on it, then it says so and writes only after the first's last record.
  const second = startDaemon({ configPath, dbPath });
  const told = await second.waitForLine(/simulated time goes on from/);
  assert.match(
    told.msg,
    /^--speed 60: simulated time goes on from \d{4}-\d\d-\d\dT.*, where .*demo\.db got to \(.* ahead of the wall clock\)$/,
  );
  await second.waitForLine(/^homeostat regulating 1 loop\(s\)/);
  assert.equal((await second.kill('SIGTERM')).code, 0, second.output);
  const written = withReadOnlyDb(
    dbPath,
    (db) =>
      db.prepare('SELECT min(at_ms) AS first FROM samples WHERE rowid > ?').get(before.id) as {
        first: number | null;
      },
  );
  assert.ok(written.first !== null, 'the second run wrote samples');
  assert.ok(written.first > before.until, `second run from ${written.first}, first ended ${before.until}`);
});
