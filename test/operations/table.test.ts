/** The operation table: each name means one thing, so the routes, the CLI and the docs agree. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RUNNERS } from '../../src/commands/runners.js';
import { everyCliOption } from '../../src/operations/cli-text.js';
import { CLI_OPERATIONS, HTTP_OPERATIONS, OPERATIONS } from '../../src/operations/table.js';

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
});
