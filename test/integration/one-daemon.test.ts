/**
 * One daemon per database, as real processes: a second `homeostat run` on the same
 * database refuses to start, naming the running one, with exit code 75 (systemd's
 * Restart=on-failure retries it); the CLI still reads the database meanwhile; once the first
 * is killed with SIGKILL (no clean stop: only the kernel releases its lock), a third starts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { DATABASE_IN_USE_EXIT_CODE } from '../../src/commands/run.js';
import { CliProcess, demoConfigText, killAll, makeTempDir, runCli } from './helpers.js';

after(killAll);

/** The demo (simulated drivers) without a broker: no other test's broker is disturbed. */
function writeConfig(dir: string): string {
  const configPath = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    configPath,
    demoConfigText((doc) => doc.delete('mqtt')),
    { mode: 0o644 },
  );
  return configPath;
}

function startRun(configPath: string, dbPath: string): CliProcess {
  return new CliProcess([
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
}

test('given a daemon on a database, when a second starts on it, then it exits 75 naming the first; after the first is killed (-9), a third starts', async (t) => {
  const temp = makeTempDir('homeostat-one-daemon-');
  t.after(temp.remove);
  const configPath = writeConfig(temp.dir);
  const dbPath = path.join(temp.dir, 'state', 'homeostat.db');

  // Given a daemon regulating on the database …
  const first = startRun(configPath, dbPath);
  await first.waitForLine(/^homeostat regulating 3 loop\(s\)/);

  // … when a second starts on the same file, then it refuses at once, in one line naming it.
  const second = startRun(configPath, dbPath);
  const exit = await second.exited;
  assert.equal(exit.code, DATABASE_IN_USE_EXIT_CODE, second.output);
  const errors = second.filter((line) => line.level >= 50);
  assert.equal(errors.length, 1, second.output);
  assert.match(
    errors[0]!.msg,
    new RegExp(
      `^another homeostat is already running on ${dbPath.replace(/[.]/g, '\\.')}: pid ${first.child.pid} on ${os.hostname()}, since \\d{4}-\\d\\d-\\d\\dT[^,]+, node id demo; stop it first`,
    ),
  );
  assert.equal(second.find(/^homeostat regulating/), undefined, 'the second never regulated');
  assert.equal(second.find(/^starting homeostat/), undefined, 'nor got as far as starting');
  assert.equal(first.exitStatus, undefined, 'the first runs on');

  // The read-only commands are neither blocked by the lock nor take it.
  const status = await runCli(['status', '--db', dbPath, '--json']);
  assert.equal(status.code, 0, status.stderr);
  assert.ok(JSON.parse(status.stdout), 'status read the database');

  // When the first dies without a clean stop, then the kernel released its lock: a third starts.
  await first.kill('SIGKILL');
  const third = startRun(configPath, dbPath);
  await third.waitForLine(/^homeostat regulating 3 loop\(s\)/);
  const stopped = await third.kill('SIGTERM');
  assert.equal(stopped.code, 0, third.output);
  assert.equal(fs.existsSync(`${dbPath}.owner`), false, 'a clean stop removes its owner record');
});
