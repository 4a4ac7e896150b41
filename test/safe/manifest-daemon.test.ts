/**
 * The daemon keeps the safe manifest (`<db>.safe.json`) of the config in force: written at the
 * start and at each reload that applies a config, in a real temp directory, through the node
 * as `homeostat run` builds it. A manifest it cannot write is warned about and never stops
 * regulation.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { readSafeManifest } from '../../src/safe/manifest.js';
import { fakeFactory, pi4Sysfs } from '../drivers/gpio/fakes.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { buildTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';

function configText(sysfsRoot: string, actuators: string): string {
  return `version: 1
node: { id: pi }
gpio: { sysfsRoot: "${sysfsRoot}" }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors:
  t: { kind: simulated, plant: p }
actuators:
${actuators}
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;
}

const HEATER = '  heater: { kind: gpio_relay, bcm: 17 }';
const HEATER_AND_FAN = `${HEATER}\n  fan: { kind: gpio_relay, bcm: 22, activeLow: false, safeState: on }`;

/** A started node on `text`, its config in a file (for reloads), its database in a temp dir. */
async function startedNode(t: Parameters<typeof tempDir>[0], text: string) {
  const dir = tempDir(t, 'homeostat-manifest-');
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, text);
  const log = recordingLogger();
  const node = buildTestNode(text, join(dir, 'homeostat.db'), {
    configPath,
    gpioPortFactory: fakeFactory().factory,
    logger: log.logger,
  });
  t.after(() => node.stop('test end'));
  await node.start();
  return { node, configPath, manifestPath: join(dir, 'homeostat.db.safe.json'), log };
}

function manifestAt(path: string) {
  const read = readSafeManifest(path);
  assert.ok(read.ok, read.ok ? '' : read.reason);
  return read.manifest;
}

describe('the daemon writes the safe manifest of the config it applies', () => {
  test('at start: every relay with its wiring, where GPIO lives, and the generation the database gave', async (t) => {
    const sysfsRoot = pi4Sysfs();
    const { manifestPath, configPath } = await startedNode(t, configText(sysfsRoot, HEATER));
    const manifest = manifestAt(manifestPath);
    assert.deepEqual(manifest.relays, [{ id: 'heater', bcm: 17, activeLow: true, safeLevel: 0 }]);
    assert.deepEqual(manifest.gpio, { sysfsRoot });
    assert.equal(manifest.generation, 1);
    assert.equal(manifest.configPath, configPath);
    assert.equal(manifest.broker, undefined);
  });

  test('at a reload that applies a config (a relay added), and not again for one that changes nothing', async (t) => {
    const sysfsRoot = pi4Sysfs();
    const { node, configPath, manifestPath } = await startedNode(t, configText(sysfsRoot, HEATER));
    writeFileSync(configPath, configText(sysfsRoot, HEATER_AND_FAN));
    await node.reload('test');
    const manifest = manifestAt(manifestPath);
    assert.deepEqual(
      manifest.relays.map((r) => [r.id, r.bcm, r.activeLow, r.safeLevel]),
      [
        ['heater', 17, true, 0],
        ['fan', 22, false, 1],
      ],
    );
    assert.equal(manifest.generation, 2);
    const written = readFileSync(manifestPath, 'utf8');
    await node.reload('no change');
    assert.equal(readFileSync(manifestPath, 'utf8'), written);
  });

  test('at the apply itself, not only through node.reload: a reload the daemon applies later (a retry after the database refused it) updates it too', async (t) => {
    const sysfsRoot = pi4Sysfs();
    const { node, manifestPath } = await startedNode(t, configText(sysfsRoot, HEATER));
    const loaded = parseConfigText(configText(sysfsRoot, HEATER_AND_FAN));
    await node.daemon.reload(loaded);
    assert.deepEqual(
      manifestAt(manifestPath).relays.map((r) => r.id),
      ['heater', 'fan'],
    );
  });

  test('an invalid file at reload leaves the manifest of the config still in force', async (t) => {
    const sysfsRoot = pi4Sysfs();
    const { node, configPath, manifestPath } = await startedNode(t, configText(sysfsRoot, HEATER_AND_FAN));
    writeFileSync(configPath, 'version: 1\nactuators: {\n');
    await node.reload('typo');
    assert.deepEqual(
      manifestAt(manifestPath).relays.map((r) => r.id),
      ['heater', 'fan'],
    );
  });

  test('a manifest that cannot be written is warned about once and stops nothing: the reload still applies', async (t) => {
    const sysfsRoot = pi4Sysfs();
    const { node, configPath, manifestPath, log } = await startedNode(t, configText(sysfsRoot, HEATER));
    rmSync(manifestPath);
    mkdirSync(manifestPath); // the rename over it fails
    writeFileSync(configPath, configText(sysfsRoot, HEATER_AND_FAN));
    await node.reload('first');
    writeFileSync(configPath, configText(sysfsRoot, HEATER_AND_FAN).replace('setpoint: 20', 'setpoint: 21'));
    await node.reload('second');
    const warnings = log.atLevel(LogLevel.warn).filter((r) => /safe manifest/.test(r.msg));
    assert.equal(warnings.length, 1, log.text());
    assert.equal(node.daemon.currentConfig().loops.room?.setpoint, 21, 'the reload applied');
  });
});
