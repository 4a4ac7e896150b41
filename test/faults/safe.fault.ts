import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chipFiles, tempTree } from '../drivers/gpio/fakes.js';
import { CliProcess, startDaemon, waitUntil } from '../integration/helpers.js';
import { fakeGpioExport } from '../support/fake-kernel.js';
import { reportFigures } from './support/figures.js';
import { Resources, Verdicts } from './support/scenario.js';

/**
 * "Commands that mean what they meant": `homeostat safe` (ExecStopPost) must not
 * depend on the config file a person is editing, and must end in time.
 *
 * 1. The daemon, a child process, regulates a heat mat on GPIO 17 of a fixture sysfs tree (a
 *    Pi 4 on Bookworm, BCM 0 = sysfs 512; onoff is replaced by support/fake-onoff.mjs, which
 *    works on the tree's plain files) and turns it ON. SIGKILL; the config is then edited into
 *    a YAML typo (one unclosed brace); `homeostat safe` runs as systemd runs it, with the state
 *    directory in $STATE_DIRECTORY: it finds the last applied config beside the database and
 *    releases the mat. Before: "no pin driven", the mat stayed ON.
 * 2. One pin's `value` is a FIFO: opening it never returns (as a wedged GPIO driver), and holds
 *    a libuv thread. The other relay is released, and the process ends within the bound,
 *    non-zero, naming the pin. Before: still running at 40 s, past the unit's TimeoutStopSec.
 */

const SYSFS_BASE = 512;
const FAKE_ONOFF = fileURLToPath(new URL('./support/fake-onoff.mjs', import.meta.url));
/** tsx start-up (about 3 s here) + the 2 s pin deadline + 1 s grace, well under TimeoutStopSec=30. */
const SAFE_BOUND_MS = 15_000;

/** A Pi 4 tree; `pins`: sysfs files of exported pins (relative to class/gpio/gpioN). */
function pi4Tree(pins: Record<number, Record<string, string>> = {}): string {
  const files: Record<string, string> = {
    ...chipFiles(SYSFS_BASE, 'pinctrl-bcm2711', 58),
    ...chipFiles(570, 'raspberrypi-exp-gpio', 8),
    'class/gpio/export': '',
    'class/gpio/unexport': '',
  };
  for (const [bcm, pin] of Object.entries(pins)) {
    for (const [name, text] of Object.entries(pin)) {
      files[`class/gpio/gpio${SYSFS_BASE + Number(bcm)}/${name}`] = text;
    }
  }
  return tempTree(files);
}

/** Raw level the relay board sees (value XOR active_low, the fixtures' convention). */
function rawLevel(sysfs: string, bcm: number): number {
  const dir = join(sysfs, 'class/gpio', `gpio${SYSFS_BASE + bcm}`);
  return (
    Number(readFileSync(join(dir, 'value'), 'utf8')) ^ Number(readFileSync(join(dir, 'active_low'), 'utf8'))
  );
}

function config(sysfs: string, actuators: string, loops: string): string {
  return `version: 1
node: { id: shed }
gpio: { sysfsRoot: "${sysfs}" }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors:
  t: { kind: simulated, plant: p }
actuators:
${actuators}
loops:
${loops}
`;
}

describe('homeostat safe: independent of the config file, bounded in time', () => {
  test('after a kill with the heat mat ON and the config then edited into a YAML typo: safe releases it from the last applied config, exit 0', {
    timeout: 90_000,
  }, async (t) => {
    const res = new Resources(t);
    const v = new Verdicts();
    const dir = res.tempDir('homeostat-fault-safe-');
    const sysfs = pi4Tree();
    // The daemon writes this tree's files itself (gpio.sysfsRoot is honoured): the export's
    // directory is the kernel's part, played here.
    fakeGpioExport(t, sysfs);
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      config(
        sysfs,
        '  heat_mat: { kind: gpio_relay, bcm: 17 }',
        '  tank: { sensor: t, raise: heat_mat, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
      ),
    );
    // Given the daemon regulating, the heat mat ON (active-low: raw low)
    const run = res.daemon(
      startDaemon({
        configPath,
        dbPath: join(dir, 'homeostat.db'),
        speed: 1,
        env: {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${FAKE_ONOFF}`.trim(),
          HOMEOSTAT_FAULT_GPIO_ROOT: sysfs,
        },
      }),
    );
    await run.waitForLine(/^heat_mat → ON \(/, 30_000);
    await waitUntil(() => rawLevel(sysfs, 17) === 0, { what: 'the heat mat pin low (ON)', timeoutMs: 5_000 });
    const manifestWritten = existsSync(join(dir, 'homeostat.db.safe.json'));

    // When it is killed, the config is edited into a typo, and ExecStopPost runs
    await run.kill('SIGKILL');
    writeFileSync(
      configPath,
      readFileSync(configPath, 'utf8').replace('node: { id: shed }', 'node: { id: shed'),
    );
    const startedAtMs = Date.now();
    const safe = res.daemon(
      new CliProcess(['safe', '--config', configPath], { env: { STATE_DIRECTORY: dir } }),
    );
    const exit = await safe.exited;
    const tookMs = Date.now() - startedAtMs;

    // Then the mat is released (raw high), from the manifest, which stderr names
    v.check('the daemon wrote the manifest', () => assert.ok(manifestWritten));
    v.check('exit 0', () => assert.deepEqual(exit, { code: 0, signal: null }, safe.output));
    v.check('heat mat released', () => assert.equal(rawLevel(sysfs, 17), 1, safe.output));
    v.check('stderr says which file, why, and what was used', () =>
      assert.match(
        safe.stderr,
        /config\.yaml cannot be used \(.*\); using the last applied config .*homeostat\.db\.safe\.json \(generation 1, written /,
      ),
    );
    v.check(`done within ${SAFE_BOUND_MS} ms`, () => assert.ok(tookMs <= SAFE_BOUND_MS, `${tookMs} ms`));
    reportFigures(t, {
      scenario: 'kill, then config typo: safe from the last applied config',
      timeToSafeMs: tookMs,
      notes: `exit ${exit.code ?? exit.signal}; heat mat raw ${rawLevel(sysfs, 17)}; time includes tsx start-up`,
    });
    v.settle();
  });

  test('one pin whose value file never answers (a FIFO): the other relay is released, and safe ends within the bound, non-zero, naming the pin', {
    timeout: 60_000,
  }, async (t) => {
    const res = new Resources(t);
    const v = new Verdicts();
    // Given both relays left ON: the heat mat (active-low, raw low) whose value is a FIFO, the fan (active-high)
    const sysfs = pi4Tree({
      17: { direction: 'out\n', active_low: '1\n' },
      27: { direction: 'out\n', active_low: '0\n', value: '1\n' },
    });
    execFileSync('mkfifo', [join(sysfs, `class/gpio/gpio${SYSFS_BASE + 17}/value`)]);
    const configPath = join(sysfs, 'config.yaml');
    writeFileSync(
      configPath,
      config(
        sysfs,
        '  heat_mat: { kind: gpio_relay, bcm: 17 }\n  fan: { kind: gpio_relay, bcm: 27, activeLow: false }',
        '  tank: { sensor: t, raise: heat_mat, lower: fan, mode: heat_cool, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
      ),
    );

    // When ExecStopPost runs
    const startedAtMs = Date.now();
    const safe = res.daemon(
      new CliProcess(['safe', '--config', configPath], { env: { STATE_DIRECTORY: sysfs } }),
    );
    const exit = await Promise.race([
      safe.exited,
      new Promise<'still running'>((resolve) =>
        setTimeout(() => resolve('still running'), SAFE_BOUND_MS).unref(),
      ),
    ]);
    const tookMs = Date.now() - startedAtMs;

    // Then
    const fanRaw = Number(readFileSync(join(sysfs, `class/gpio/gpio${SYSFS_BASE + 27}/value`), 'utf8'));
    v.check(`ended within ${SAFE_BOUND_MS} ms`, () => assert.notEqual(exit, 'still running', safe.output));
    v.check('non-zero: killed by itself, as a pending sysfs call keeps a process from exiting', () =>
      assert.deepEqual(exit, { code: null, signal: 'SIGKILL' }, safe.output),
    );
    v.check('the fan released', () => assert.equal(fanRaw, 0, safe.output));
    v.check('the hung pin named', () => {
      assert.match(
        safe.stdout,
        /^heat_mat \(gpio_relay BCM 17 = sysfs 529, active-low\): FAILED, not driven safe: no answer from sysfs within 2000 ms/m,
      );
      assert.match(safe.stdout, /^homeostat safe: NOT CONFIRMED SAFE: heat_mat \(BCM 17\)$/m);
      assert.match(safe.stderr, /a sysfs call for heat_mat \(BCM 17\) never returned/);
    });
    reportFigures(t, {
      scenario: 'a hung sysfs value file (FIFO): safe ends anyway',
      timeToSafeMs: tookMs,
      notes: `exit ${exit === 'still running' ? 'none (still running)' : (exit.code ?? exit.signal)}; fan raw ${fanRaw}; heat mat not confirmed; time includes tsx start-up`,
    });
    v.settle();
  });
});
