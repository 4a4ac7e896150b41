/**
 * End to end, as a person runs it: the built CLI (`node dist/cli.js`, what the install puts on
 * PATH; `npm run build` makes it, `npm ci` too) writes the starter on a fixture tree, then
 * `validate` and `doctor` accept it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { tempDir } from '../support/tmp.js';
import { fixture } from './helpers.js';

const CLI = 'dist/cli.js';

function homeostat(...args: string[]) {
  // stdin is a pipe, not a terminal: init asks nothing, as under --yes.
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000, input: '' });
}

before(() => {
  assert.ok(
    existsSync(join('dist', 'commands', 'init.js')),
    'dist/ is missing init: run `npm run build` first',
  );
});

test('init --yes on a Pi 4 tree with one probe, then validate and doctor: every hardware check passes', (t) => {
  const path = join(tempDir(t, 'homeostat-init-cli-'), 'etc', 'config.yaml');
  const tree = fixture('pi4-one-ds18b20');
  const init = homeostat(
    'init',
    path,
    '--sysfs-root',
    tree,
    '--yes',
    '--relay-pin',
    '17',
    '--setpoint',
    '21',
  );
  assert.equal(init.status, 0, init.stdout + init.stderr);
  assert.match(init.stdout, /^ {2}1\) 28-0316a2795bff {2}23\.125 °C$/m);
  assert.match(init.stdout, new RegExp(`^wrote ${path}: loop room, .* setpoint 21 °C$`, 'm'));
  assert.equal(statSync(path).mode & 0o777, 0o640);

  const validate = homeostat('validate', path);
  assert.equal(validate.status, 0, validate.stdout + validate.stderr);

  const doctor = homeostat('doctor', path, '--db', join(tempDir(t), 'state.db'));
  // The HTTP port and systemd depend on the machine running the tests; the hardware does not.
  for (const line of [
    `✓ config: ${path} is valid (1 loop(s))`,
    '✓ GPIO17 (actuators.room_heater): sysfs 529 on pinctrl-bcm2711 (base 512), exportable',
    '✓ 1-Wire bus: 1 DS18B20 present: 28-0316a2795bff',
    '✓ DS18B20 sensors.room_temp: 23.125 °C (28-0316a2795bff)',
  ]) {
    assert.ok(doctor.stdout.split('\n').includes(line), `${line}\nnot in:\n${doctor.stdout}`);
  }

  const again = homeostat('init', '--out', path, '--sysfs-root', tree, '--yes', '--relay-pin', '17');
  assert.equal(again.status, 1);
  assert.match(again.stdout, /exists; nothing written/);
});

test('init without --relay-pin on hardware, stdin not a terminal: exit 2 naming --relay-pin, nothing written', (t) => {
  const path = join(tempDir(t), 'config.yaml');
  const init = homeostat('init', path, '--sysfs-root', fixture('pi5-two-ds18b20'));
  assert.equal(init.status, 2, init.stdout + init.stderr);
  assert.match(init.stdout, /no --relay-pin given/);
  assert.equal(existsSync(path), false);
});

test('init --sensor sim: a simulated room that validates', (t) => {
  const path = join(tempDir(t), 'sim.yaml');
  const init = homeostat('init', path, '--sensor', 'sim', '--sysfs-root', fixture('pi4-one-ds18b20'));
  assert.equal(init.status, 0, init.stdout + init.stderr);
  const validate = homeostat('validate', path);
  assert.equal(validate.status, 0, validate.stdout + validate.stderr);
});
