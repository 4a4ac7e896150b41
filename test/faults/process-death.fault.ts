import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import YAML from 'yaml';
import { chipFiles, tempTree } from '../drivers/gpio/fakes.js';
import { CliProcess, REPO_ROOT } from '../integration/helpers.js';
import { reportFigures } from './support/figures.js';
import { openScenario } from './support/scenario.js';

/**
 * "When the process itself dies": a GPIO relay keeps its last level when the daemon
 * is killed (SIGKILL, out of memory, a crash). systemd's `ExecStopPost=` then runs
 * `homeostat safe`, which must drive every GPIO relay to its safe level with neither the
 * database nor (necessarily) the broker, and send MQTT plugs their safe command when the
 * broker answers. Here: the fermenter example (heat mat on GPIO 17, fridge on a Tasmota plug)
 * on a fixture sysfs tree (a Pi 4 on Bookworm, BCM 0 = sysfs 512) left as a killed daemon
 * leaves it — heat mat exported as an output and ON — and a private broker.
 */

const SYSFS_BASE = 512;
const HEAT_MAT_BCM = 17;
/** Generous: tsx start-up included (systemd runs dist/cli.js, faster). */
const SAFE_BOUND_MS = 10_000;

describe('process death: ExecStopPost homeostat safe', () => {
  test('after a kill with the heat mat ON: homeostat safe releases it and turns the plug off, no database needed', {
    timeout: 60_000,
  }, async (t) => {
    const { res, v, broker, client, dir } = await openScenario(t, 'homeostat-fault-death-', ['cmnd/#']);
    const configPath = join(dir, 'fermenter.yaml');
    const doc = YAML.parseDocument(readFileSync(join(REPO_ROOT, 'config', 'fermenter-pi.yaml'), 'utf8'));
    doc.setIn(['mqtt', 'url'], broker.url);
    doc.deleteIn(['mqtt', 'username']);
    doc.deleteIn(['mqtt', 'passwordFile']);
    writeFileSync(configPath, doc.toString());
    // Given the pin as the killed daemon left it: an active-low output, logically ON (raw low)
    const pin = `class/gpio/gpio${SYSFS_BASE + HEAT_MAT_BCM}`;
    const sysfs = tempTree({
      ...chipFiles(SYSFS_BASE, 'pinctrl-bcm2711', 58),
      ...chipFiles(570, 'raspberrypi-exp-gpio', 8),
      'class/gpio/export': '',
      'class/gpio/unexport': '',
      [`${pin}/direction`]: 'out\n',
      [`${pin}/active_low`]: '1\n',
      [`${pin}/value`]: '1\n',
    });

    // When systemd runs ExecStopPost (no database anywhere near)
    const startedAtMs = Date.now();
    const safe = new CliProcess(['safe', '--config', configPath, '--sysfs-root', sysfs]);
    res.daemon(safe);
    const exit = await safe.exited;
    const tookMs = Date.now() - startedAtMs;

    // Then the heat mat is released (logical 0 → raw high on an active-low board) and the
    // fridge plug got its OFF
    const value = readFileSync(join(sysfs, pin, 'value'), 'utf8').trim();
    const activeLow = readFileSync(join(sysfs, pin, 'active_low'), 'utf8').trim();
    const plugOff = client.received.find((m) => m.topic === 'cmnd/fridge_plug/POWER');
    v.check('exit 0: every GPIO relay safe', () =>
      assert.deepEqual(exit, { code: 0, signal: null }, safe.output),
    );
    v.check('heat mat released', () =>
      assert.deepEqual({ value, activeLow }, { value: '0', activeLow: '1' }),
    );
    v.check('fridge plug commanded OFF', () => assert.equal(plugOff?.payload.toString(), 'OFF'));
    v.check(`done within ${SAFE_BOUND_MS} ms`, () => assert.ok(tookMs <= SAFE_BOUND_MS, `${tookMs} ms`));
    reportFigures(t, {
      scenario: 'process killed: ExecStopPost homeostat safe',
      timeToSafeMs: tookMs,
      notes: `GPIO heat mat value ${value} (active_low ${activeLow}), plug ${plugOff ? `OFF after ${plugOff.atMs - startedAtMs} ms` : 'not commanded'}; time includes tsx start-up`,
    });
    v.settle();
  });
});
