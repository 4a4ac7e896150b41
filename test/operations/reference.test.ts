/** docs/api.md and docs/command-line.md: generated from the operation table, and in sync. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { commandUsage } from '../../src/operations/cli-text.js';
import {
  API_REFERENCE_PATH,
  apiReference,
  COMMAND_LINE_PATH,
  commandLineReference,
  HOME_ASSISTANT_PATH,
  homeAssistantReference,
} from '../../src/operations/reference.js';
import { CLI_OPERATIONS, HTTP_OPERATIONS, MQTT_COMMANDS } from '../../src/operations/table.js';

describe('docs/api.md', () => {
  const page = apiReference();

  test('equals the page generated from the operation table (run `npm run docs` after changing it)', () => {
    assert.ok(
      readFileSync(API_REFERENCE_PATH, 'utf8') === page,
      'docs/api.md is out of date: run `npm run docs` and commit the result',
    );
  });

  test('has a section for every route, naming its query parameters', () => {
    for (const { http } of HTTP_OPERATIONS) {
      const heading = `\n## ${http.method} ${http.path.replace(/:(\w+)/g, '{$1}')}\n`;
      assert.ok(page.includes(heading), heading);
      for (const name of Object.keys(http.query ?? {})) assert.ok(page.includes(`Query \`${name}\``), name);
    }
  });
});

describe('docs/command-line.md', () => {
  const committed = readFileSync(COMMAND_LINE_PATH, 'utf8');

  test('its generated parts equal the table (run `npm run docs` after changing it)', () => {
    assert.ok(
      commandLineReference(committed) === committed,
      'docs/command-line.md is out of date: run `npm run docs` and commit the result',
    );
  });

  test('lists every command with its usage', () => {
    for (const { cli } of CLI_OPERATIONS) {
      assert.ok(committed.includes(`\n${commandUsage(cli)}\n`), cli.command);
      assert.ok(committed.includes(`\n### homeostat ${cli.command}\n`), cli.command);
    }
  });
});

describe('docs/home-assistant.md', () => {
  const committed = readFileSync(HOME_ASSISTANT_PATH, 'utf8');

  test('its table of command topics equals the table (run `npm run docs` after changing it)', () => {
    assert.ok(
      homeAssistantReference(committed) === committed,
      'docs/home-assistant.md is out of date: run `npm run docs` and commit the result',
    );
  });

  test('lists every command topic with its payload', () => {
    for (const { suffix } of MQTT_COMMANDS) {
      assert.ok(committed.includes(`| \`<base>/<loop>/${suffix}\` |`), suffix);
    }
  });
});
