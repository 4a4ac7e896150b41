/**
 * `gpio.sysfsRoot` was honoured by init, validate and doctor, but `homeostat run`
 * opened its relays with onoff, whose root is fixed at /sys/class/gpio: on a machine without
 * sysfs GPIO it wrote the real /sys/class/gpio/export, failed, and exited 1 logging "SIGTERM"
 * though no signal came. These run the CLI as a child (what systemd runs) on a fixture tree
 * whose root differs from /sys: the pin must be exported in the fixture, and a start that
 * fails must say what failed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { chipFiles } from './drivers/gpio/fakes.js';
import { fakeGpioExport } from './support/fake-kernel.js';
import { type HasAfter, tempDir, tempTree } from './support/tmp.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

/** A cold greenhouse: a DS18B20 at 10 °C, setpoint 20, a relay heater on BCM 17. */
function configText(sysfsRoot: string): string {
  return `
version: 1
node: { id: pi }
gpio: { sysfsRoot: ${JSON.stringify(sysfsRoot)} }
sensors:
  probe: { kind: ds18b20 }
actuators:
  heater: { kind: gpio_relay, bcm: 17, activeLow: false }
loops:
  greenhouse:
    sensor: probe
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
`;
}

/** `homeostat run` on `sysfsRoot` with JSON logs; `output` collects stdout and stderr. */
function run(t: HasAfter, sysfsRoot: string) {
  const dir = tempDir(t, 'homeostat-run-');
  const configPath = join(tempTree(t, { 'config.yaml': configText(sysfsRoot) }), 'config.yaml');
  const args = ['run', '--config', configPath, '--db', join(dir, 'state.db'), '--log-format', 'json'];
  const child = spawn(process.execPath, [...CLI, ...args, '--http-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = { child, output: '', exited: new Promise<number | null>((r) => child.on('exit', r)) };
  child.stdout.on('data', (chunk) => (state.output += chunk));
  child.stderr.on('data', (chunk) => (state.output += chunk));
  t.after(() => {
    child.kill('SIGKILL');
  });
  return state;
}

/** Resolves once `output` holds `text`; rejects (with the output) after 20 s or at exit. */
function waitFor(state: ReturnType<typeof run>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${text}" within 20 s:\n${state.output}`)), 20_000);
    const check = () => {
      if (!state.output.includes(text)) return;
      clearTimeout(timer);
      resolve();
    };
    state.child.stdout.on('data', check);
    state.child.stderr.on('data', check);
    void state.exited.then(() => {
      clearTimeout(timer);
      if (state.output.includes(text)) resolve();
      else reject(new Error(`exited before "${text}":\n${state.output}`));
    });
  });
}

const PROBE = 'bus/w1/devices/28-0316a2795bff/temperature';

describe('homeostat run honours gpio.sysfsRoot', () => {
  test('given a fixture Pi 4 tree, when the daemon runs, then BCM 17 is exported there (sysfs 529), driven, and left safe at SIGTERM', async (t) => {
    const root = tempTree(t, {
      ...chipFiles(512, 'pinctrl-bcm2711', 58),
      'class/gpio/export': '',
      'class/gpio/unexport': '',
      [PROBE]: '10000\n',
    });
    const kernel = fakeGpioExport(t, root);
    const daemon = run(t, root);
    await waitFor(daemon, 'heater → ON');
    assert.deepEqual(kernel.exported, [529], 'the fixture export file got the pin');
    assert.equal(readFileSync(join(root, 'class/gpio/gpio529/direction'), 'utf8'), 'low');
    assert.equal(readFileSync(join(root, 'class/gpio/gpio529/value'), 'utf8'), '1', 'the heater on');
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0, daemon.output);
    assert.equal(readFileSync(join(root, 'class/gpio/gpio529/value'), 'utf8'), '0', 'the heater safe');
  });

  test('given a tree without GPIO chips, when the start fails, then the log says what failed and never names a signal', async (t) => {
    const root = tempTree(t, { [PROBE]: '10000\n' });
    const daemon = run(t, root);
    assert.equal(await daemon.exited, 1, daemon.output);
    const lines = daemon.output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; err?: { message: string } });
    const failed = lines.find((l) => l.msg === 'start failed');
    assert.ok(failed?.err, daemon.output);
    assert.match(failed.err.message, /no GPIO chips under .*class\/gpio/);
    assert.ok(
      lines.some((l) => l.msg === 'start failed: driving actuators to their safe state'),
      daemon.output,
    );
    assert.ok(!daemon.output.includes('SIGTERM'), daemon.output);
  });
});
