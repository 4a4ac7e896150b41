/**
 * `homeostat autotune room`, then `tuning room latest` and `tunings room`, against the real
 * daemon: the demo node (its HTTP API, SQLite store and simulated room) on a ManualClock that
 * the test moves one control cycle at a time while the command follows the run. The whole path
 * the user takes: request stored, run in the loop, result stored as a proposal, accepted.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { autotuneCommand } from '../../src/commands/autotune.js';
import { tuningCommand, tuningsCommand } from '../../src/commands/tunings.js';
import { startApiNode } from '../http/support.js';
import { demoConfigText } from '../support/config.js';
import { tempDir } from '../support/tmp.js';

/** Simulated time the run may take before the test gives up: the daemon's limit is 48 h. */
const MOST_CYCLES = 6 * 360;

test('given the demo node, when autotune room runs to the end, then the result is proposed as version 1, and tuning room latest puts it in force', async (t) => {
  const node = await startApiNode(t);
  for (let i = 0; i < 30; i++) await node.clock.advance(10_000); // regulating near its setpoint
  const dir = tempDir(t, 'homeostat-autotune-daemon-');
  const config = path.join(dir, 'config.yaml');
  writeFileSync(
    config,
    demoConfigText((doc) => doc.setIn(['http', 'port'], Number(new URL(node.base).port))),
  );

  const out: string[] = [];
  let code: number | undefined;
  const following = autotuneCommand(
    { configPath: config, loop: 'room', wait: true, cancel: false, pollMs: 1 },
    (line) => out.push(line),
    () => {},
  ).then((exit) => {
    code = exit;
  });
  for (let cycles = 0; code === undefined && cycles < MOST_CYCLES; cycles++) {
    await node.clock.advance(10_000);
    await sleep(2); // let the command poll
  }
  await node.clock.advance(10_000);
  await following;
  assert.equal(code, 0, out.join('\n'));
  assert.match(
    out[0]!,
    /^room: autotune started: switches the heater \(room_heater\) on and off around 20\.0 °C/,
  );
  assert.match(out[1]!, /^room: measuring the sensor noise \(output held\)/);
  assert.ok(
    out.some((line) =>
      /^room: relay cycles 2\/3 · band ±[\d.]+ °C · elapsed \d+ min · about \d+ min left$/.test(line),
    ),
    out.join('\n'),
  );
  const done = out.findIndex((line) => line.startsWith('room: autotune done: 3 cycles in '));
  assert.ok(done > 0, out.join('\n'));
  assert.match(
    out[done + 1]!,
    /^ {2}model: gain [\d.]+ ± [\d.]+ °C at full output, τ \d+ ± [\d.]+ s, θ [\d.]+ ± [\d.]+ s/,
  );
  assert.match(
    out[done + 2]!,
    /^ {2}gains: kp [\d.]+, tiS [\d.]+, tdS 0, setpoint weight [\d.]+ \(SIMC, τc [\d.]+ s\)$/,
  );
  assert.equal(
    out.at(-1),
    'room: stored as tuning version 1, not applied: accept it with homeostat tuning room latest',
  );

  const applied: string[] = [];
  assert.equal(
    await tuningCommand(
      { configPath: config, loop: 'room', version: 'latest' },
      (l) => applied.push(l),
      () => {},
    ),
    0,
  );
  assert.match(applied[0]!, /^room: the newest tuning in force \(generation \d+\)/);
  const table: string[] = [];
  await tuningsCommand(
    // The daemon answers: the database (another file) is not read.
    { configPath: config, dbPath: path.join(dir, 'not-read.db'), loop: 'room', json: false },
    (l) => table.push(l),
    () => {},
  );
  assert.equal(table[0], 'room: 1 stored tuning(s); in force: version 1');
  assert.match(table[2]!, /^\* 1 +\d{4}-\d\d-\d\d \d\d:\d\d +autotune /);
});
