/**
 * `homeostat status | history | events | set` with no daemon answering on the HTTP API (a free
 * port): the database, read-only, with a notice on stderr (so `--json` and `--csv` stay
 * machine-readable on stdout); `set` checks the loop against the config, then tries the broker.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { loopReports } from '../../src/commands/inspect.js';
import { DEMO } from '../storage/support.js';
import { runCliHere } from '../support/cli.js';
import { demoConfigText, minimalSimConfigText } from '../support/config.js';
import { freePort } from '../support/net.js';
import { databaseWithHistory } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi, recordingBroker } from './fake-api.js';

/** A config file holding `text`, in a temp dir removed after the test. */
function configFile(t: TestContext, text: string): string {
  const file = path.join(tempDir(t, 'homeostat-cli-fallback-'), 'config.yaml');
  writeFileSync(file, text);
  return file;
}

describe('given no daemon answering (the database, read-only)', () => {
  const dir = tempDir({ after }, 'homeostat-cli-api-db-');
  const dbPath = path.join(dir, 'state.db');
  let port = 0;
  let config = '';
  let lastWritten = '';

  before(async () => {
    await databaseWithHistory(DEMO, dbPath);
    port = await freePort();
    config = path.join(dir, 'config.yaml');
    writeFileSync(
      config,
      demoConfigText((doc) => {
        doc.setIn(['http', 'port'], port);
        // The database as an installed node finds it: the config's storage.path, not --db.
        doc.setIn(['storage', 'path'], dbPath);
      }),
    );
    const savedMs = loopReports(dbPath).flatMap((r) => (r.savedAtMs === null ? [] : [r.savedAtMs]));
    lastWritten = new Date(Math.max(...savedMs)).toISOString();
  });

  const notice = () =>
    `daemon not running (no answer at http://127.0.0.1:${port}: connection refused); last status written at ${lastWritten} (database ${dbPath})\n`;

  test('status: says the daemon is not running and when the status was last written, then prints the database status', async () => {
    const result = await runCliHere(['status', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, notice());
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 6, result.stdout);
    assert.match(result.stdout, /generation 2, observed 2; setpoint from cli, mode from file/);
  });

  test('status --json: stdout is the database reports as valid JSON; the notice on stderr only', async () => {
    const result = await runCliHere(['status', '--json', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    const reports = JSON.parse(result.stdout) as { loop: string }[];
    assert.deepEqual(reports.map((r) => r.loop).sort(), ['fermenter', 'greenhouse_humidity', 'room']);
    assert.equal(result.stderr, notice());
  });

  test('history --csv: the CSV from the database on stdout, the notice on stderr', async () => {
    const result = await runCliHere(['history', 'room', '--since', '1000d', '--csv', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines[0], 'time,setpoint,measured,output,action,resolution_s');
    assert.ok(lines.length > 1, 'samples from the database');
    assert.match(
      result.stderr,
      /^daemon not running \(no answer at .*\); history from the database .*state\.db/,
    );
  });

  test('events --json: valid JSON on stdout, the notice on stderr', async () => {
    const result = await runCliHere(['events', '--json', '--loop', 'room', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    const events = JSON.parse(result.stdout) as { loop: string; kind: string }[];
    assert.ok(events.some((e) => e.kind === 'setpoint-changed'));
    assert.ok(events.every((e) => e.loop === 'room'));
    assert.match(result.stderr, /^daemon not running \(no answer at .*\); events from the database/);
  });

  test('--db given: that file is read, the daemon is not asked, and the notice says why', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }));
    const answering = configFile(
      t,
      demoConfigText((doc) => doc.setIn(['http', 'port'], server.port)),
    );
    const result = await runCliHere(['status', '--config', answering, '--db', dbPath]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requests.length + server.nodeRequests.length, 0, 'the API was not asked');
    assert.match(result.stderr, /^reading the database given by --db .*; last status written at /);
    assert.match(result.stdout, /setpoint from cli/);
  });

  test('a daemon that takes the request and does not answer within 2 s: said so (not "not running"), then the database', async (t) => {
    const server = await fakeApi(t, () => 'hang', { node: () => 'hang' });
    const busy = configFile(
      t,
      demoConfigText((doc) => {
        doc.setIn(['http', 'port'], server.port);
        doc.setIn(['storage', 'path'], dbPath);
      }),
    );
    const result = await runCliHere(['status', '--json', '--config', busy]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stderr,
      `daemon at ${server.url}: no answer within 2 s (daemon busy or hung?); last status written at ${lastWritten} (database ${dbPath})\n`,
    );
    assert.equal((JSON.parse(result.stdout) as unknown[]).length, 3);
  });

  test('no database either: both said, exit 1', async (t) => {
    const missing = path.join(tempDir(t), 'nope.db');
    const noDb = configFile(
      t,
      demoConfigText((doc) => {
        doc.setIn(['http', 'port'], port);
        doc.setIn(['storage', 'path'], missing);
      }),
    );
    const result = await runCliHere(['status', '--config', noDb]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^daemon not running \(no answer at .*\); no database at .*nope\.db/);
  });

  test('http.enabled false: the database, saying the API is off', async (t) => {
    const off = configFile(
      t,
      demoConfigText((doc) => {
        doc.setIn(['http', 'enabled'], false);
        doc.setIn(['storage', 'path'], dbPath);
      }),
    );
    const result = await runCliHere(['status', '--config', off]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /^HTTP API off in the config \(http\.enabled: false\); last status written at /,
    );
  });
});

describe('set, given no daemon answering on the HTTP API', () => {
  test('an unknown loop: fails at once naming the config loops; nothing is sent to the broker', async (t) => {
    const broker = await recordingBroker(t);
    const port = await freePort();
    const config = configFile(
      t,
      demoConfigText((doc) => {
        doc.setIn(['http', 'port'], port);
        doc.setIn(['mqtt', 'url'], broker.url);
      }),
    );
    const result = await runCliHere(['set', 'kitchen', '--setpoint', '20', '--config', config]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `homeostat set: unknown loop "kitchen": ${config} has room, fermenter, greenhouse_humidity\n`,
    );
    assert.equal(broker.connections, 0, 'no connection to the broker');
  });

  test('a known loop, the broker refusing too: both said, exit 1', async (t) => {
    const [httpPort, mqttPort] = [await freePort(), await freePort()];
    const config = configFile(
      t,
      demoConfigText((doc) => {
        doc.setIn(['http', 'port'], httpPort);
        doc.setIn(['mqtt', 'url'], `mqtt://127.0.0.1:${mqttPort}`);
      }),
    );
    const result = await runCliHere(['set', 'room', '--setpoint', '20', '--config', config]);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      new RegExp(
        `^homeostat set: daemon not running \\(no answer at http://127\\.0\\.0\\.1:${httpPort}: connection refused\\), and cannot reach the broker at mqtt://127\\.0\\.0\\.1:${mqttPort}`,
      ),
    );
    assert.match(result.stderr, /sending through the broker at mqtt:\/\/127\.0\.0\.1:\d+/);
  });

  test('a known loop, no broker configured: both said, exit 1', async (t) => {
    const port = await freePort();
    const config = configFile(t, minimalSimConfigText({ extra: `http: { port: ${port} }` }));
    const result = await runCliHere(['set', 'room', '--setpoint', '20', '--config', config]);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /^homeostat set: daemon not running \(no answer at .*: connection refused\), and no broker is configured in /,
    );
  });
});
