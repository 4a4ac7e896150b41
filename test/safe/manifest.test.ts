/**
 * `homeostat safe` from the last applied config (the safe manifest beside the database), and
 * bounded in time. Before: a config edited into a YAML typo, or missing, left every relay
 * ON ("no pin driven"); one pin whose sysfs file hung kept the command running past the unit's
 * stop timeout. On the fixture Pi 4 of safe-fixtures.ts, with its fake kernel.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_DEADLINE_MS, safeCommand } from '../../src/commands/safe.js';
import { parseConfigText } from '../../src/config/load.js';
import {
  buildSafeManifest,
  readSafeManifest,
  SafeManifestWriter,
  safeManifestPath,
} from '../../src/safe/manifest.js';
import { configFile, fakeKernel, pi4, rawLevel } from '../commands/safe-fixtures.js';
import { LogLevel, recordingLogger } from '../support/logger.js';

const HEATER_AND_COOLER = `  heater: { kind: gpio_relay, bcm: 17 }
  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }`;
/** Both left ON by the killed daemon: heater active-low (pin low), cooler active-high (pin high). */
const BOTH_ON = {
  17: { direction: 'out', value: 1, activeLow: 1 },
  27: { direction: 'out', value: 1, activeLow: 0 },
} as const;
const RELEASED = [1, 0]; // heater pin high, cooler pin low
const NOW_MS = Date.UTC(2026, 11, 2, 7);
const THREE_HOURS_MS = 3 * 3600_000;

/** Writes the manifest of config `text` (as the daemon would have) beside `dbPath`. */
function writeManifest(dbPath: string, text: string, generation = 7): void {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const manifest = buildSafeManifest(loaded.config, { nowMs: NOW_MS - THREE_HOURS_MS, generation });
  writeFileSync(safeManifestPath(dbPath)!, JSON.stringify(manifest));
}

/**
 * Given both relays ON and a config naming them, whose manifest the daemon wrote (unless
 * `manifest: false`), after `edit` changed the config file: runs safe on the fake kernel.
 */
async function safeAfterEdit(opts: {
  edit: (configPath: string) => void;
  manifest?: boolean;
  manifestRelays?: string;
  kernel?: Parameters<typeof fakeKernel>[1];
  pinTimeoutMs?: number;
  deadlineMs?: number;
}) {
  const root = pi4(BOTH_ON);
  const kernel = fakeKernel(root, opts.kernel);
  const dbPath = join(root, 'homeostat.db');
  if (opts.manifest !== false) {
    writeManifest(dbPath, readFileSync(configFile(root, opts.manifestRelays ?? HEATER_AND_COOLER), 'utf8'));
  }
  const configPath = configFile(root, HEATER_AND_COOLER);
  opts.edit(configPath);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const hung: string[][] = [];
  const startedAtMs = Date.now();
  const code = await safeCommand(
    {
      configPath,
      dbPath,
      sysfsRoot: root,
      io: kernel.io,
      env: {},
      nowMs: () => NOW_MS,
      note: (line) => void stderr.push(line),
      onHungCalls: (pending) => void hung.push(pending()),
      cgroupOf: () => undefined,
      ...(opts.pinTimeoutMs === undefined ? {} : { pinTimeoutMs: opts.pinTimeoutMs }),
      ...(opts.deadlineMs === undefined ? {} : { deadlineMs: opts.deadlineMs }),
    },
    (line) => void stdout.push(line),
  );
  return {
    code,
    tookMs: Date.now() - startedAtMs,
    pins: [rawLevel(root, 17), rawLevel(root, 27)],
    stdout: stdout.join('\n'),
    stderr: stderr.join('\n'),
    hung,
    kernel,
    configPath,
    manifestPath: safeManifestPath(dbPath)!,
  };
}

const YAML_TYPO = (path: string) =>
  writeFileSync(path, readFileSync(path, 'utf8').replace('node: { id: pi }', 'node: { id: pi'));

describe('homeostat safe: the config file cannot be used, the last applied config can', () => {
  const cases: [string, (path: string) => void, RegExp][] = [
    ['a YAML syntax error (an unclosed brace)', YAML_TYPO, /cannot be used \(.*config\.yaml:\d+:\d+: /],
    ['the file gone', (path) => rmSync(path), /cannot be used \(.*config file not found\)/],
    [
      'a file that parses but does not validate',
      (path) => writeFileSync(path, 'version: 1\nactuators: { heater: { kind: gpio_relay } }\n'),
      /cannot be used \(/,
    ],
  ];
  for (const [given, edit, why] of cases) {
    test(`given ${given} after the kill, when safe runs, then every relay of the manifest is released, exit 0, and stderr says which file, why, and the manifest's generation and age`, async () => {
      const result = await safeAfterEdit({ edit });
      assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
      assert.deepEqual(result.pins, RELEASED);
      assert.match(result.stderr, why);
      assert.ok(
        result.stderr.includes(
          `using the last applied config ${result.manifestPath} (generation 7, written 2026-12-02T04:00:00.000Z (3 h 0 min ago))`,
        ),
        result.stderr,
      );
      assert.match(result.stdout, /^homeostat safe: 2 of 2 GPIO relay\(s\) at their safe level$/m);
    });
  }

  test('given no manifest and a config that does not parse, when safe runs, then nothing is written and it exits 1 saying why for both', async () => {
    const result = await safeAfterEdit({ edit: YAML_TYPO, manifest: false });
    assert.equal(result.code, 1);
    assert.deepEqual(result.kernel.writes, []);
    assert.deepEqual(result.pins, [0, 1], 'left as they were: nothing to go by');
    assert.match(
      result.stderr,
      /^homeostat safe: cannot read any actuator: .*config\.yaml: .*; the last applied config .*homeostat\.db\.safe\.json: not found .*: no pin driven$/m,
    );
  });

  test('given a valid file without the cooler (edited after the kill) and the manifest with it, when safe runs, then both are released (the union) and stderr says so', async () => {
    const result = await safeAfterEdit({
      edit: (path) => configFile(dirname(path), '  heater: { kind: gpio_relay, bcm: 17 }'),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.pins, RELEASED);
    assert.match(result.stderr, /also driving what only the last applied config .* has: cooler \(BCM 27\)/);
  });

  test('given the same pin wired differently in the file and the manifest, the valid file wins and the difference is reported', async () => {
    const result = await safeAfterEdit({
      manifestRelays: `  heater: { kind: gpio_relay, bcm: 17, activeLow: false }
  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }`,
      edit: () => {},
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.pins, RELEASED, 'the file: heater active-low, released = pin high');
    assert.match(
      result.stderr,
      /BCM 17 is wired differently in the last applied config .* \(active-high, safe OFF\) than in .*config\.yaml \(active-low, safe OFF\); following .*config\.yaml/,
    );
  });

  test('a manifest of another format version is set aside with the reason; the valid file is used', async () => {
    const result = await safeAfterEdit({
      edit: (path) => {
        const manifestPath = join(path, '..', 'homeostat.db.safe.json');
        const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
        writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: 2 }));
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.pins, RELEASED);
    assert.match(result.stderr, /set aside: format version 2, this homeostat reads version 1/);
  });
});

describe('homeostat safe is bounded in time', () => {
  test('given the heater pin whose write never returns, when safe runs, then the cooler is released, it returns at the pin deadline with exit 1 naming the heater, and the hung call is reported', async () => {
    // A deadline a healthy pin meets on a loaded machine too; the hung call never returns at all.
    const result = await safeAfterEdit({ edit: YAML_TYPO, kernel: { hang: 512 + 17 }, pinTimeoutMs: 1_000 });
    assert.equal(result.code, 1);
    assert.equal(result.pins[1], 0, 'cooler released');
    assert.ok(result.tookMs < 30_000, `${result.tookMs} ms: returned, not hung`);
    assert.match(result.stdout, /^heater .*: FAILED, not driven safe: no answer from sysfs within 1000 ms/m);
    assert.match(result.stdout, /^homeostat safe: NOT CONFIRMED SAFE: heater \(BCM 17\)$/m);
    assert.doesNotMatch(result.stdout, /NOT CONFIRMED SAFE: cooler/);
    assert.deepEqual(result.hung, [['heater (BCM 17)']]);
  });

  test('the overall deadline ends the drive even when a pin is allowed longer', async () => {
    const result = await safeAfterEdit({
      edit: () => {},
      kernel: { hang: 512 + 17 },
      pinTimeoutMs: 60_000,
      deadlineMs: 150,
    });
    assert.equal(result.code, 1);
    assert.equal(result.pins[1], 0);
    assert.ok(result.tookMs < 1_500, `${result.tookMs} ms`);
    assert.match(
      result.stdout,
      /^heater .*: FAILED, not driven safe: no answer within the overall deadline of 150 ms$/m,
    );
  });

  test('the overall deadline is below the unit’s TimeoutStopSec (with room for node to start)', () => {
    const unit = readFileSync('systemd/homeostat.service', 'utf8');
    const stopS = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
    assert.ok(stopS > 0, 'TimeoutStopSec found');
    assert.ok(DEFAULT_DEADLINE_MS + 5_000 <= stopS * 1000, `${DEFAULT_DEADLINE_MS} ms vs ${stopS} s`);
  });
});

function manifestGeneration(path: string): number | undefined {
  const read = readSafeManifest(path);
  assert.ok(read.ok, read.ok ? '' : `${path}: ${read.reason}`);
  return read.manifest.generation;
}

describe('the safe manifest', () => {
  const WITH_BROKER = `version: 1
node: { id: pi }
mqtt: { url: 'mqtt://bob:hunter2@127.0.0.1:1', passwordFile: /etc/homeostat/mqtt-password, clientId: shed }
gpio: { base: 512 }
sensors: { t: { kind: mqtt, topic: t } }
actuators:
  heater: { kind: gpio_relay, bcm: 17 }
  fridge: { kind: mqtt_switch, preset: tasmota, device: fridge_plug }
loops:
  room: { sensor: t, raise: heater, lower: fridge, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;

  test('keeps pins, wiring, GPIO placement, the plugs’ safe commands and the broker as named, never a password', () => {
    const loaded = parseConfigText(WITH_BROKER);
    assert.ok(loaded.ok);
    const text = JSON.stringify(buildSafeManifest(loaded.config, { nowMs: NOW_MS, generation: 3 }));
    assert.doesNotMatch(text, /hunter2/);
    const manifest = JSON.parse(text);
    assert.deepEqual(manifest.relays, [{ id: 'heater', bcm: 17, activeLow: true, safeLevel: 0 }]);
    assert.deepEqual(manifest.gpio, { sysfsRoot: '/sys', base: 512 });
    assert.deepEqual(
      manifest.plugs.map((p: { topic: string; payload: string }) => [p.topic, p.payload]),
      [['cmnd/fridge_plug/POWER', 'OFF']],
    );
    assert.equal(manifest.broker.mqtt.passwordFile, '/etc/homeostat/mqtt-password');
    assert.equal(manifest.broker.mqtt.url, 'mqtt://bob:***@127.0.0.1:1');
    assert.equal(manifest.broker.mqtt.clientId, 'shed');
  });

  test('given a broken file, the plugs and the broker come from the manifest (the plug is tried, its dead man’s switch reported)', async () => {
    const root = pi4({ 17: { direction: 'out', value: 1, activeLow: 1 } });
    const dbPath = join(root, 'homeostat.db');
    writeManifest(dbPath, WITH_BROKER.replace(/passwordFile: [^,]+, /, ''));
    const configPath = join(root, 'config.yaml');
    writeFileSync(configPath, 'version: 1\nactuators: {\n');
    const lines: string[] = [];
    const push = (line: string) => void lines.push(line);
    const code = await safeCommand(
      {
        configPath,
        dbPath,
        sysfsRoot: root,
        io: fakeKernel(root).io,
        env: {},
        note: push,
        cgroupOf: () => undefined,
      },
      push,
    );
    assert.equal(code, 0, lines.join('\n'));
    assert.equal(rawLevel(root, 17), 1);
    assert.match(
      lines.join('\n'),
      /^fridge \(mqtt_switch\): not reached \(broker mqtt:\/\/bob:\*\*\*@127\.0\.0\.1:1: .*\); turns itself off ≤ 600 s after its last ON \(Tasmota PulseTime\)$/m,
    );
  });

  test('reading: not JSON, not a manifest, a FIFO-safe capped read: each says why', () => {
    const dir = pi4();
    const path = join(dir, 'x.safe.json');
    writeFileSync(path, '{');
    assert.match(String((readSafeManifest(path) as { reason: string }).reason), /^not JSON/);
    writeFileSync(path, JSON.stringify({ format: 'homeostat-safe-manifest', version: 1, relays: 'x' }));
    assert.match(String((readSafeManifest(path) as { reason: string }).reason), /^not a safe manifest/);
    mkdirSync(join(dir, 'd.safe.json'));
    assert.match(
      String((readSafeManifest(join(dir, 'd.safe.json')) as { reason: string }).reason),
      /directory/,
    );
  });

  test('a database placed elsewhere (storage.path) gets a copy in $STATE_DIRECTORY, where safe finds it when the config that placed the database no longer parses', async () => {
    const loaded = parseConfigText(readFileSync(configFile(pi4(), HEATER_AND_COOLER), 'utf8'));
    assert.ok(loaded.ok);
    const stateDir = pi4(BOTH_ON);
    const elsewhere = join(pi4(), 'usb.db');
    const env = { STATE_DIRECTORY: stateDir };
    const writer = SafeManifestWriter.beside(elsewhere, 'config.yaml', recordingLogger().logger, env);
    writer?.write(loaded.config, () => 4);
    assert.equal(manifestGeneration(`${elsewhere}.safe.json`), 4);
    assert.equal(manifestGeneration(join(stateDir, 'homeostat.db.safe.json')), 4);
    // The CLI, unable to read storage.path from the broken file, gives the default database.
    const configPath = join(stateDir, 'config.yaml');
    writeFileSync(configPath, 'version: 1\nstorage: { path: [\n');
    const lines: string[] = [];
    const push = (line: string) => void lines.push(line);
    const code = await safeCommand(
      {
        configPath,
        dbPath: join(stateDir, 'homeostat.db'),
        sysfsRoot: stateDir,
        io: fakeKernel(stateDir).io,
        env,
        note: push,
        cgroupOf: () => undefined,
      },
      push,
    );
    assert.equal(code, 0, lines.join('\n'));
    assert.deepEqual([rawLevel(stateDir, 17), rawLevel(stateDir, 27)], RELEASED);
  });

  test('the writer: the temporary file of an interrupted write is swept; an unchanged manifest is not written again; a failure is warned once per streak, its end told once, and never thrown', () => {
    const loaded = parseConfigText(readFileSync(configFile(pi4(), HEATER_AND_COOLER), 'utf8'));
    assert.ok(loaded.ok);
    const dir = pi4();
    const path = join(dir, 'homeostat.db.safe.json');
    const log = recordingLogger();
    let nowMs = NOW_MS;
    const writer = new SafeManifestWriter({ paths: [path], logger: log.logger, nowMs: () => nowMs });
    const leftByAKill = join(dir, '.homeostat.db.safe.json.tmp-999999');
    writeFileSync(leftByAKill, '{');
    writer.write(loaded.config, () => 1);
    assert.equal(existsSync(leftByAKill), false, 'the temporary file of an interrupted write is removed');
    const first = readFileSync(path, 'utf8');
    nowMs += 60_000;
    writer.write(loaded.config, () => 1);
    assert.equal(readFileSync(path, 'utf8'), first, 'same content: not rewritten (same writtenAt)');
    rmSync(path);
    mkdirSync(path); // the rename over it now fails
    writer.write(loaded.config, () => 2);
    writer.write(loaded.config, () => {
      throw new Error('database gone');
    });
    assert.equal(log.atLevel(LogLevel.warn).length, 1, log.text());
    assert.match(log.atLevel(LogLevel.warn)[0]!.msg, /cannot write the safe manifest .*: regulation goes on/);
    rmSync(path, { recursive: true });
    writer.write(loaded.config, () => 2);
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).generation, 2);
    assert.equal(log.messages(LogLevel.info).filter((m) => /written again/.test(m)).length, 1);
  });
});
