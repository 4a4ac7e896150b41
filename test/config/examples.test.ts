/** Every config shipped in config/ is valid: the examples are documentation that must stay true. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';

const examples = fs.readdirSync('config').filter((name) => name.endsWith('.yaml'));

test('there are example configs', () => assert.ok(examples.length >= 2, examples.join(', ')));

for (const name of examples) {
  test(`config/${name} validates`, () => {
    const result = loadConfigFile(path.join('config', name));
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  });
}
