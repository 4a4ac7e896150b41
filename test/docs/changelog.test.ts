/** CHANGELOG.md names every database schema version, so a person going back knows what changed. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { MIGRATIONS } from '../../src/store/migrations.js';

const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');

test('every migration has its line in the changelog, newest first, with its description', () => {
  const listed = [...changelog.matchAll(/^- schema (\d+): (.*)$/gm)].map((m) => [Number(m[1]), m[2]]);
  const expected = [...MIGRATIONS].reverse().map((step) => [step.version, step.description]);
  assert.deepEqual(listed, expected);
});
