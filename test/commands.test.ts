/**
 * The inspection commands (status, plan, events) against a real database written by a daemon
 * that ran on the demo plants for a while (manual clock, real SQLite file in a temp dir).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { eventsCommand, parseDurationMs, planCommand, statusCommand } from '../src/commands/inspect.js';
import { DEMO } from './storage/support.js';
import { databaseWithHistory } from './support/node.js';
import { tempDir, tempTree } from './support/tmp.js';

const dir = tempDir({ after }, 'homeostat-commands-');
const dbPath = path.join(dir, 'state.db');

function capture(run: (write: (line: string) => void) => number): { code: number; lines: string[] } {
  const lines: string[] = [];
  const code = run((line) => lines.push(line));
  return { code, lines };
}

before(async () => {
  await databaseWithHistory(DEMO, dbPath);
});

describe('homeostat status', () => {
  test('--json: every loop with its desired state, generation, observedGeneration and conditions', () => {
    const { code, lines } = capture((write) => statusCommand({ dbPath, json: true }, write));
    assert.equal(code, 0);
    const reports = JSON.parse(lines.join('\n')) as Array<{
      loop: string;
      desired: { setpoint: number; setpointSource: string; generation: number };
      observedGeneration: number;
      status: { conditions: { type: string }[] };
    }>;
    assert.deepEqual(reports.map((r) => r.loop).sort(), ['fermenter', 'greenhouse_humidity', 'room']);
    const room = reports.find((r) => r.loop === 'room')!;
    assert.equal(room.desired.setpoint, 21);
    assert.equal(room.desired.setpointSource, 'cli');
    assert.equal(room.desired.generation, 2, 'the runtime change took the next generation');
    assert.equal(room.observedGeneration, 2, 'and was reconciled');
    assert.ok(room.status.conditions.some((c) => c.type === 'SensorHealthy'));
  });

  test('human-readable: one status line and one generation line per loop', () => {
    const { code, lines } = capture((write) => statusCommand({ dbPath, json: false }, write));
    assert.equal(code, 0);
    assert.equal(lines.length, 6);
    assert.match(lines.join('\n'), /generation 2, observed 2; setpoint from cli, mode from file/);
  });

  test('with the config beside it: the units of each loop, as the API shows them', () => {
    const configPath = path.join(tempTree({ after }, { 'config.yaml': DEMO }), 'config.yaml');
    const { lines } = capture((write) => statusCommand({ dbPath, json: false, configPath }, write));
    const line = (loop: string) => lines.find((l) => l.startsWith(`${loop}  `)) ?? '';
    assert.match(line('room'), /^room {2}\d+\.\d\d °C → 21 °C {2}heat/);
    assert.match(line('greenhouse_humidity'), /^greenhouse_humidity {2}\d+\.\d\d % → \d+ % /);
    const without = capture((write) => statusCommand({ dbPath, json: false }, write)).lines;
    assert.match(
      without.find((l) => l.startsWith('room  ')) ?? '',
      /^room {2}\d+\.\d\d {2}→ 21 {2}heat/,
      'no config: no unit',
    );
  });

  test('a missing database: a clear error naming the path', () => {
    assert.throws(
      () => statusCommand({ dbPath: path.join(dir, 'nope.db'), json: false }, () => {}),
      /no database at .*nope\.db/,
    );
  });
});

describe('homeostat plan', () => {
  const configFile = (t: TestContext, text: string) =>
    path.join(tempTree(t, { 'config.yaml': text }, 'homeostat-plan-'), 'config.yaml');
  test('the applied file: no changes, exit 0', (t) => {
    const { code, lines } = capture((write) =>
      planCommand({ configPath: configFile(t, DEMO), dbPath }, write),
    );
    assert.deepEqual({ code, lines }, { code: 0, lines: ['No changes.'] });
  });
  test('a changed setpoint and a removed loop: Terraform-style lines, exit 2', (t) => {
    const text = DEMO.replace('setpoint: 18', 'setpoint: 19').slice(
      0,
      DEMO.indexOf('  greenhouse_humidity:'),
    );
    const { code, lines } = capture((write) =>
      planCommand({ configPath: configFile(t, text), dbPath }, write),
    );
    assert.equal(code, 2);
    assert.ok(lines.includes('~ loops.fermenter.setpoint 18 → 19'), lines.join('\n'));
    assert.ok(lines.includes('- loops.greenhouse_humidity (loop removed)'), lines.join('\n'));
    assert.match(lines.at(-1)!, /^Plan: \d+ to add, 1 to change, \d+ to remove\.$/);
  });
  test('an invalid file: its path: message lines, exit 1', (t) => {
    const { code, lines } = capture((write) =>
      planCommand(
        { configPath: configFile(t, DEMO.replace('sensor: room_temp', 'sensor: nope')), dbPath },
        write,
      ),
    );
    assert.equal(code, 1);
    assert.ok(lines.includes('loops.room.sensor: unknown sensor "nope"'), lines.join('\n'));
  });
});

describe('homeostat events', () => {
  test('config applied, the runtime change with its source, actuator switches with their reason', () => {
    const { code, lines } = capture((write) => eventsCommand({ dbPath, json: false }, write));
    assert.equal(code, 0);
    const text = lines.join('\n');
    assert.match(text, /config-applied/);
    assert.match(text, /room {2}setpoint-changed \(cli\)/);
    assert.match(text, /room {2}actuator \(regulate\) {2}room_heater → 1/);
  });
  test('--loop filters', () => {
    const { lines } = capture((write) => eventsCommand({ dbPath, json: true, loop: 'fermenter' }, write));
    const events = JSON.parse(lines.join('\n')) as { loop?: string }[];
    assert.ok(events.length > 0);
    assert.ok(events.every((e) => e.loop === 'fermenter'));
  });
});

describe('durations for --since', () => {
  for (const [text, ms] of [
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1.5d', 129_600_000],
  ] as const) {
    test(`${text} = ${ms} ms`, () => assert.equal(parseDurationMs(text), ms));
  }
  test('a bad duration says how to write one', () => {
    assert.throws(() => parseDurationMs('two hours'), /use a number and s, m, h or d/);
  });
});
