/** The operation table: each name means one thing, so the routes, the CLI and the docs agree. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RUNNERS } from '../../src/commands/runners.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { everyCliOption } from '../../src/operations/cli-text.js';
import {
  CLI_OPERATIONS,
  HTTP_OPERATIONS,
  httpCommandKind,
  MQTT_COMMANDS,
  OPERATIONS,
} from '../../src/operations/table.js';

describe('the operation table', () => {
  test('no two operations share a route or a CLI command', () => {
    const routes = HTTP_OPERATIONS.map(({ http }) => `${http.method} ${http.path}`);
    assert.equal(new Set(routes).size, routes.length);
    const commands = CLI_OPERATIONS.map(({ cli }) => cli.command);
    assert.equal(new Set(commands).size, commands.length);
  });

  test('an option name is a flag for every command or takes a value for every command', () => {
    assert.doesNotThrow(() => everyCliOption());
  });

  test('every CLI command has its runner, and every runner a command', () => {
    assert.deepEqual(Object.keys(RUNNERS).sort(), CLI_OPERATIONS.map((op) => op.name).sort());
  });

  test('what a command says it uses are operations of the table', () => {
    for (const { cli } of CLI_OPERATIONS) {
      for (const name of cli.uses ?? [])
        assert.ok(Object.hasOwn(OPERATIONS, name), `${cli.command}: ${name}`);
    }
  });

  test('a write is a POST with an answer the CLI can read', () => {
    for (const { name, http } of HTTP_OPERATIONS.filter((op) => op.http.write && !op.http.open)) {
      assert.equal(http.method, 'POST', name);
      assert.ok(http.client ?? http.response, name);
    }
  });

  test('no two MQTT command topics share a suffix or a parser, and the broker is asked for exactly them', () => {
    const suffixes = MQTT_COMMANDS.map((command) => command.suffix);
    assert.equal(new Set(suffixes).size, suffixes.length);
    const kinds = MQTT_COMMANDS.map((command) => command.kind);
    assert.equal(new Set(kinds).size, kinds.length);
    const topics = topicsFor('homeostat', 'pi-1');
    assert.deepEqual(
      [...topics.commandSubscription].sort(),
      suffixes.map((suffix) => `homeostat/pi-1/+/${suffix}`).sort(),
    );
    for (const { suffix, kind } of MQTT_COMMANDS) {
      assert.deepEqual(topics.parseCommandTopic(`homeostat/pi-1/room/${suffix}`), { loop: 'room', kind });
      assert.equal(topics.loopCommand('room', kind), `homeostat/pi-1/room/${suffix}`);
    }
  });

  test('a write over HTTP is parsed as one of its MQTT topics is; one that is no command names none', () => {
    const table: [operation: keyof typeof OPERATIONS, kind: string | undefined][] = [
      ['setLoop', 'json'],
      ['resetFault', 'faultReset'],
      ['autotune', 'autotune'],
      ['applyTuning', 'tuning'],
      ['selectPreset', 'preset'],
      ['commandProfile', 'profile'],
      ['login', undefined],
    ];
    for (const [operation, kind] of table) {
      if (kind === undefined) assert.throws(() => httpCommandKind(operation), /no MQTT command/);
      else assert.equal(httpCommandKind(operation), kind, operation);
    }
    for (const { name, http } of HTTP_OPERATIONS.filter((op) => op.http.command !== undefined)) {
      const own = MQTT_COMMANDS.filter((command) => command.operation === name).map((c) => c.kind);
      assert.ok(own.includes(http.command!), `${name}: ${http.command} is not one of its topics' (${own})`);
    }
  });
});
