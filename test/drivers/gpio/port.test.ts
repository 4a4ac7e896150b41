import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import '../../../src/drivers/gpio/input.js';
import { GPIO_PERMISSION_FIX, gpioOpenError } from '../../../src/drivers/gpio/port.js';
import '../../../src/drivers/gpio/pulse-rate.js';
import '../../../src/drivers/gpio/relay.js';
import { errnoError } from '../../support/assert.js';

describe('GPIO port', () => {
  test('loading the GPIO drivers does not load onoff (a native addon): only the real factory does', () => {
    const cache = createRequire(import.meta.url).cache;
    assert.deepEqual(
      Object.keys(cache).filter((path) => path.includes('/onoff/')),
      [],
    );
  });

  const cases = [
    {
      code: 'EACCES',
      message: /GPIO sysfs 529: permission denied .*sudo usermod -aG gpio homeostat\) and restart/,
    },
    { code: 'EPERM', message: /permission denied/ },
    { code: 'EBUSY', message: /GPIO sysfs 529: busy, claimed by a kernel driver/ },
    { code: 'EINVAL', message: /rejects this number; check the BCM number and the chip base/ },
    { code: 'ENOENT', message: /this kernel has no sysfs GPIO/ },
  ];
  for (const c of cases) {
    test(`an ${c.code} while opening says what to do, and keeps the cause`, () => {
      const cause = errnoError(c.code);
      const err = gpioOpenError(cause, 529);
      assert.match(err.message, c.message);
      assert.equal(err.cause, cause);
    });
  }

  test('the permission fix names the group and the restart', () => {
    assert.equal(
      GPIO_PERMISSION_FIX,
      'add the homeostat user to the gpio group (sudo usermod -aG gpio homeostat) and restart',
    );
  });

  test('any other error passes through unchanged', () => {
    const err = errnoError('EIO');
    assert.equal(gpioOpenError(err, 17), err);
    assert.match(gpioOpenError('boom', 17).message, /GPIO sysfs 17: boom/);
  });
});
