import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_SYSFS_BYTES, readSysfsText } from '../../../src/drivers/gpio/sysfs-read.js';
import { tempTree } from './fakes.js';

describe('readSysfsText', () => {
  test('reads a small sysfs file whole', async () => {
    const root = tempTree({ temperature: '23125\n' });
    assert.equal(await readSysfsText(`${root}/temperature`), '23125\n');
  });

  test('given an endless file (/dev/zero), then one page at most, at once', async () => {
    const text = await readSysfsText('/dev/zero');
    assert.equal(text.length, MAX_SYSFS_BYTES);
  });

  test('given a missing file, then the errno error callers already handle (ENOENT)', async () => {
    await assert.rejects(readSysfsText('/nonexistent/w1_slave'), { code: 'ENOENT' });
  });
});
