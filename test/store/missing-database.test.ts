/** What the read-only commands say when there is no database where they look. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { missingDatabaseHint } from '../../src/store/database.js';
import { tempDir, tempTree } from '../support/tmp.js';

test('given a checkout where the demo ran, the hint names its database', (t) => {
  const checkout = tempTree(t, { 'var/demo.db': '' });
  assert.equal(
    missingDatabaseHint('./var/homeostat.db', checkout),
    "the demo's is var/demo.db (add --db var/demo.db)",
  );
  assert.equal(
    missingDatabaseHint(path.join(checkout, 'var', 'demo.db'), checkout),
    `is the daemon running with --db ${path.join(checkout, 'var', 'demo.db')}?`,
    'asked for the demo database itself: no hint back to it',
  );
});

test('given no demo database, the hint asks for --db', (t) => {
  assert.equal(
    missingDatabaseHint('/var/lib/homeostat/homeostat.db', tempDir(t)),
    'is the daemon running with --db /var/lib/homeostat/homeostat.db?',
  );
});
