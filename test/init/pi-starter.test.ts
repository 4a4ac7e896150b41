/**
 * config/pi-starter.yaml, the Pi example the install uses, is exactly what `homeostat init`
 * writes for a Pi 4 with one DS18B20 and `--relay-pin 17` (host name raspberrypi). After a
 * change to the starter, regenerate it:
 *   UPDATE_PI_STARTER=1 node --import tsx --test test/init/pi-starter.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { chooseStarter } from '../../src/init/choose.js';
import { scanHardware } from '../../src/init/scan.js';
import { renderStarter } from '../../src/init/starter.js';
import { fixture, HOSTNAME, runInit } from './helpers.js';

const COMMITTED = 'config/pi-starter.yaml';
const TREE = 'pi4-one-ds18b20';
const FLAGS = { relayPin: '17' };

/** What init writes on the tree for /sys itself (no gpio.sysfsRoot line). */
async function starterForSys(): Promise<string> {
  const scan = await scanHardware(fixture(TREE), { nowMs: () => 0 });
  const choice = await chooseStarter(scan, FLAGS, { nodeId: HOSTNAME, write: () => {} });
  assert.ok('plan' in choice, 'error' in choice ? choice.error : '');
  return renderStarter(choice.plan);
}

test(`${COMMITTED} is what init writes for one DS18B20 and --relay-pin 17`, async () => {
  const expected = await starterForSys();
  if (process.env.UPDATE_PI_STARTER === '1') writeFileSync(COMMITTED, expected);
  assert.equal(
    readFileSync(COMMITTED, 'utf8'),
    expected,
    `regenerate: UPDATE_PI_STARTER=1 (see ${import.meta.url})`,
  );
});

test('initCommand itself writes the same, but for the gpio block naming the scanned tree', async (t) => {
  const run = await runInit(t, { tree: TREE, ...FLAGS });
  assert.equal(run.code, 0, run.lines.join('\n'));
  const gpioBlock = [
    '# init scanned this tree instead of /sys (--sysfs-root): pins and probes are looked up there.',
    'gpio:',
    `  sysfsRoot: ${JSON.stringify(fixture(TREE))}`,
    '',
  ].join('\n');
  const sysBlock = [
    '# The BCM → sysfs GPIO numbering is detected from /sys/class/gpio/gpiochip*/label and base',
    '# (512 on a Pi 4 with Bookworm, 571 on a Pi 5). Set it only if `homeostat doctor` says so:',
    '# gpio:',
    '#   base: 512',
    '',
  ].join('\n');
  assert.ok(run.text!.includes(gpioBlock), run.text);
  assert.equal(run.text!.replace(gpioBlock, sysBlock), readFileSync(COMMITTED, 'utf8'));
});

test('its first lines say what hardware it needs', () => {
  const head = readFileSync(COMMITTED, 'utf8').split('\n').slice(0, 8).join('\n');
  assert.match(head, /Raspberry Pi/);
  assert.match(head, /Hardware it needs:/);
  assert.match(head, /one DS18B20 temperature probe on the 1-Wire bus/);
  assert.match(head, /one relay board channel on GPIO17 \(header pin 11\)/);
});
