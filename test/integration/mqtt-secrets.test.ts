/**
 * A password written into the broker URL (`mqtt://user:secret@host`) works, and never shows:
 * not in the daemon's log, not in the config text kept in SQLite, not in events, not in the
 * output of `homeostat set`, `status`, `events` or `plan`. A real Mosquitto with a password
 * file and the daemon as a child process. The configs turn the HTTP API off: `set` goes through
 * the broker, never to the default address (where a developer's own daemon may listen).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { demoConfigText, runCli, withReadOnlyDb } from './helpers.js';
import { daemonOnBrokerForSuite } from './suite-daemon.js';

const SECRET = `pw-${randomBytes(8).toString('hex')}`;

describe('a password inside mqtt.url', () => {
  const suite = daemonOnBrokerForSuite(
    'homeostat-secrets-',
    (broker) =>
      demoConfigText((doc) => {
        doc.setIn(['mqtt', 'url'], broker.url.replace('mqtt://', `mqtt://homeostat:${SECRET}@`));
        doc.setIn(['http', 'enabled'], false);
      }),
    { passwordFile: [{ username: 'homeostat', password: SECRET }] },
  );

  test('given the daemon connected with it, then its log shows the URL as user:***@ and never the password', async () => {
    const set = await runCli(['set', 'room', '--setpoint', '21.5', '--config', suite.configPath]);
    assert.equal(set.code, 0, set.stdout + set.stderr);
    assert.match(set.stderr, /sending through the broker at mqtt:\/\/homeostat:\*\*\*@127\.0\.0\.1/);
    await suite.daemon.waitForLine(/setpoint|MQTT/); // the daemon handled it and logged on

    assert.match(suite.daemon.output, /homeostat:\*\*\*@127\.0\.0\.1/);
    assert.equal(suite.daemon.output.includes(SECRET), false, 'no log line carries the password');
  });

  test('the config text kept in SQLite and every event are redacted', () => {
    const { configs, events } = withReadOnlyDb(suite.dbPath, (db) => ({
      configs: db.prepare<[], { text: string }>('SELECT text FROM configs').all(),
      events: db.prepare('SELECT * FROM events').all(),
    }));
    assert.ok(configs.length > 0);
    for (const { text } of configs) {
      assert.equal(text.includes(SECRET), false, 'no stored config carries the password');
      assert.match(text, /mqtt:\/\/homeostat:\*\*\*@127\.0\.0\.1/);
    }
    assert.equal(JSON.stringify(events).includes(SECRET), false, 'no event carries it');
  });

  test('status, events and plan print nothing of it; plan sees no change', async () => {
    for (const args of [
      ['status', '--db', suite.dbPath],
      ['status', '--db', suite.dbPath, '--json'],
      ['events', '--db', suite.dbPath, '--json'],
    ]) {
      const result = await runCli(args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.equal((result.stdout + result.stderr).includes(SECRET), false, args.join(' '));
    }
    const plan = await runCli(['plan', '--config', suite.configPath, '--db', suite.dbPath]);
    assert.equal(plan.code, 0, `the redacted URL is not a change:\n${plan.stdout}${plan.stderr}`);
    assert.equal((plan.stdout + plan.stderr).includes(SECRET), false);
  });

  test('`homeostat set` against an unreachable broker names the URL redacted', async () => {
    const deadPath = join(suite.dir, 'dead.yaml');
    writeFileSync(
      deadPath,
      demoConfigText((doc) => {
        doc.setIn(['mqtt', 'url'], `mqtt://homeostat:${SECRET}@127.0.0.1:1`);
        doc.setIn(['http', 'enabled'], false);
      }),
    );
    const result = await runCli(['set', 'room', '--setpoint', '21', '--config', deadPath]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /sending through the broker at mqtt:\/\/homeostat:\*\*\*@127\.0\.0\.1:1/);
    assert.match(result.stdout, /homeostat:\*\*\*@127\.0\.0\.1:1/);
    assert.equal((result.stdout + result.stderr).includes(SECRET), false);
  });
});
