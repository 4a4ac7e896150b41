import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import {
  brokerFix,
  type CheckResult,
  checkBroker,
  checkConfig,
  checkDatabase,
  checkGpio,
  checkNotify,
  checkOneWire,
  doctorCommand,
  formatCheck,
} from '../../src/commands/doctor.js';
import type { Config } from '../../src/config/schema.js';
import { currentOwner, DaemonLock } from '../../src/store/daemon-lock.js';
import { openStore } from '../../src/store/database.js';
import type { DatagramSocket } from '../../src/systemd/notify.js';
import { pi4Sysfs } from '../drivers/gpio/fakes.js';
import { freePort } from '../support/net.js';

const FIXTURES = resolve('test/fixtures/sys');
const W1_TWO = join(FIXTURES, 'w1-two-sensors');

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-doctor-'));
  tempDirs.push(dir);
  return dir;
}

/** A valid config of simulated loops plus `extra` YAML lines (gpio, mqtt, more sensors/actuators). */
function configFile(extra: { top?: string[]; sensors?: string[]; actuators?: string[] } = {}): string {
  const path = join(tempDir(), 'config.yaml');
  const text = [
    'version: 1',
    'node: { id: t }',
    ...(extra.top ?? []),
    'simulation: { plants: { p: { ambient: 10, timeConstantS: 60 } } }',
    'sensors:',
    '  t1: { kind: simulated, plant: p }',
    ...(extra.sensors ?? []).map((line) => `  ${line}`),
    'actuators:',
    '  h: { kind: simulated_relay, plant: p, gain: 10 }',
    ...(extra.actuators ?? []).map((line) => `  ${line}`),
    'loops:',
    '  room: { sensor: t1, raise: h, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 0.5 } }',
  ].join('\n');
  writeFileSync(path, text);
  return path;
}

function config(extra: Parameters<typeof configFile>[0] = {}): Config {
  const { result, config } = checkConfig(configFile(extra));
  assert.equal(result.status, 'ok', result.detail);
  return config!;
}

const statuses = (results: CheckResult[]) => results.map((r) => `${r.status} ${r.name}`);

describe('config check', () => {
  test('a valid file: ok, with the number of loops', () => {
    const { result, config } = checkConfig(configFile());
    assert.equal(result.status, 'ok');
    assert.match(result.detail, /valid \(1 loop\(s\)\)/);
    assert.ok(config);
  });

  test('a file with a key under its old name: ok, the deprecation listed under it', () => {
    const path = configFile({ actuators: ['c: { kind: simulated_relay, plant: p, gain: -10, bandC: 0.4 }'] });
    const { result } = checkConfig(path);
    assert.equal(result.status, 'ok');
    assert.deepEqual(result.detail.split('\n').slice(1), [
      'actuators.c.bandC: renamed band (same value): write band: 0.4 (deprecated)',
    ]);
  });

  test('an invalid file: fail, the "path: message" errors as detail, no config', () => {
    const path = join(tempDir(), 'bad.yaml');
    writeFileSync(path, 'version: 1\nnode: { id: t }\nloops: { room: { sensor: nope } }\n');
    const { result, config } = checkConfig(path);
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /^loops\.room\.\w+: /m);
    assert.match(result.fix ?? '', /homeostat validate/);
    assert.equal(config, undefined);
  });
});

describe('GPIO check', () => {
  const relay = (bcm: number) => `heater: { kind: gpio_relay, bcm: ${bcm} }`;

  test('no pin in the config: skipped', async () => {
    assert.deepEqual(statuses(await checkGpio(config())), ['skip GPIO']);
  });

  test('given the Pi 5 tree, a relay on GPIO17 resolves to sysfs 588 on pinctrl-rp1 and is exportable', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${join(FIXTURES, 'pi5-bookworm')} }`],
      actuators: [relay(17)],
    });
    const results = await checkGpio(cfg, { canWrite: async () => true });
    assert.deepEqual(statuses(results), ['ok GPIO chips', 'ok GPIO17 (actuators.heater)']);
    assert.match(results[0]!.detail, /gpiochip571 "pinctrl-rp1" base 571/);
    assert.match(results[1]!.detail, /sysfs 588 on pinctrl-rp1 \(base 571\), exportable/);
  });

  test('export not writable: fail, the fix names the gpio group', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${join(FIXTURES, 'pi4-bookworm')} }`],
      actuators: [relay(17)],
    });
    const asked: string[] = [];
    const results = await checkGpio(cfg, {
      canWrite: async (path) => {
        asked.push(path);
        return false;
      },
    });
    assert.deepEqual(asked, [join(FIXTURES, 'pi4-bookworm/class/gpio/export')]);
    assert.equal(results[1]?.status, 'fail');
    assert.match(results[1]!.detail, /sysfs 529 .*not writable/);
    assert.match(results[1]!.fix ?? '', /sudo usermod -aG gpio homeostat/);
  });

  test('a pin already exported is fine even when export is not writable', async () => {
    const root = pi4Sysfs({ 529: 'out' });
    const cfg = config({ top: [`gpio: { sysfsRoot: ${root} }`], actuators: [relay(17)] });
    const results = await checkGpio(cfg, { canWrite: async () => false });
    assert.equal(results[1]?.status, 'ok');
    assert.match(results[1]!.detail, /already exported \(out\)/);
  });

  test('no chips: one failure whose fix explains sysfs GPIO', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${join(FIXTURES, 'no-chips')} }`],
      actuators: [relay(17)],
    });
    const results = await checkGpio(cfg, { canWrite: async () => true });
    assert.deepEqual(statuses(results), ['fail GPIO chips']);
    assert.match(results[0]!.fix ?? '', /sysfs GPIO.*CONFIG_GPIO_SYSFS/);
  });

  test('only expanders: the pin fails and the fix says to set chipLabel or base', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${join(FIXTURES, 'expanders-only')} }`],
      sensors: ['door: { kind: gpio_input, bcm: 22 }'],
    });
    const results = await checkGpio(cfg, { canWrite: async () => true });
    assert.deepEqual(statuses(results), ['ok GPIO chips', 'fail GPIO22 (sensors.door)']);
    assert.match(results[1]!.fix ?? '', /gpio\.chipLabel/);
  });
});

describe('1-Wire check', () => {
  test('no DS18B20 in the config: skipped', async () => {
    assert.deepEqual(statuses(await checkOneWire(config())), ['skip 1-Wire']);
  });

  test('each configured probe gives a reading now, in °C', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${W1_TWO} }`],
      sensors: [
        'a: { kind: ds18b20, address: 28-0316a2795bff }',
        'b: { kind: ds18b20, address: 28-3c01d607d4a1 }',
      ],
    });
    const results = await checkOneWire(cfg, { nowMs: () => 0 });
    assert.deepEqual(statuses(results), ['ok 1-Wire bus', 'ok DS18B20 sensors.a', 'ok DS18B20 sensors.b']);
    assert.match(results[0]!.detail, /2 DS18B20 present: 28-0316a2795bff, 28-3c01d607d4a1/);
    assert.match(results[1]!.detail, /^23\.125 °C \(28-0316a2795bff\)/);
    assert.match(results[2]!.detail, /^23 °C \(28-3c01d607d4a1\)/);
  });

  test('no address with two probes present: fail, the fix lists the addresses to choose from', async () => {
    const cfg = config({ top: [`gpio: { sysfsRoot: ${W1_TWO} }`], sensors: ['a: { kind: ds18b20 }'] });
    const results = await checkOneWire(cfg);
    assert.equal(results[1]?.status, 'fail');
    assert.match(results[1]!.fix ?? '', /sensors\.a\.address to one of 28-0316a2795bff, 28-3c01d607d4a1/);
  });

  test('an address that is not on the bus: fail', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${W1_TWO} }`],
      sensors: ['a: { kind: ds18b20, address: 28-000000000001 }'],
    });
    const results = await checkOneWire(cfg);
    assert.equal(results[1]?.status, 'fail');
    assert.match(results[1]!.detail, /not present/);
    assert.match(results[1]!.fix ?? '', /present: 28-0316a2795bff/);
  });

  test('no 1-Wire bus: fail, the fix is the w1-gpio overlay', async () => {
    const cfg = config({
      top: [`gpio: { sysfsRoot: ${join(FIXTURES, 'pi4-bookworm')} }`],
      sensors: ['a: { kind: ds18b20 }'],
    });
    const results = await checkOneWire(cfg);
    assert.deepEqual(statuses(results), ['fail 1-Wire bus']);
    assert.match(results[0]!.fix ?? '', /dtoverlay=w1-gpio to \/boot\/firmware\/config\.txt.*reboot/);
  });
});

describe('broker check', () => {
  test('no mqtt block: skipped', async () => {
    assert.equal((await checkBroker(config(), { env: {} })).status, 'skip');
  });

  test('a closed port: fail with the ECONNREFUSED fix, and no password in the output', async () => {
    const port = await freePort(); // bound, then released: nothing listens on it
    const dir = tempDir();
    writeFileSync(join(dir, 'pw'), 'hunter2\n');
    const cfg = config({
      top: [`mqtt: { url: "mqtt://127.0.0.1:${port}", username: bob, passwordFile: ${join(dir, 'pw')} }`],
    });
    const result = await checkBroker(cfg, { env: {} });
    assert.equal(result.status, 'fail');
    assert.match(result.detail, new RegExp(`127\\.0\\.0\\.1:${port} as bob: .*ECONNREFUSED`));
    assert.match(result.fix ?? '', /mosquitto running/);
    assert.doesNotMatch(formatCheck(result).join('\n'), /hunter2/);
  });

  test('an unreadable password file: fail naming the file', async () => {
    const cfg = config({ top: ['mqtt: { url: "mqtt://127.0.0.1:1", passwordFile: /nonexistent/pw }'] });
    const result = await checkBroker(cfg, { env: {} });
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /password file \/nonexistent\/pw/);
  });

  const fixes: [string, Error & { code?: string }, RegExp][] = [
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      /mosquitto/,
    ],
    [
      'MQTT 5 not authorized',
      new Error('Connection refused: Not authorized'),
      /mqtt\.username.*passwordFile/,
    ],
    ['3.1.1 bad password', new Error('Connection refused: Bad username or password'), /passwordFile/],
    [
      'self-signed certificate',
      Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      /tls\.caFile/,
    ],
    ['no CONNACK', new Error('timed out after 5 s without a CONNACK'), /no answer within 5 s/],
  ];
  for (const [when, error, fix] of fixes) {
    test(`fix for ${when}`, () => assert.match(brokerFix(error), fix));
  }
});

describe('database check', () => {
  test('no file yet in a writable directory: ok (the daemon creates it)', async () => {
    const result = await checkDatabase(join(tempDir(), 'state/sub/homeostat.db'));
    assert.equal(result.status, 'ok');
    assert.match(result.detail, /does not exist yet/);
  });

  test('a database the daemon made: opens, quick_check ok', async () => {
    const path = join(tempDir(), 'homeostat.db');
    const { db } = openStore({ path, logger: pino({ level: 'silent' }), nowMs: () => 0 });
    try {
      const result = await checkDatabase(path);
      assert.equal(result.status, 'ok', result.detail);
      assert.match(result.detail, /quick_check ok/);
    } finally {
      db.close();
    }
  });

  test('given a daemon holding the database, then the check names it; once released, it says none runs', async (t) => {
    const path = join(tempDir(), 'homeostat.db');
    openStore({ path, logger: pino({ level: 'silent' }), nowMs: () => 0 }).db.close();
    const lock = DaemonLock.acquire(path, {
      ...currentOwner('kettle'),
      startedAt: '2026-11-30T16:00:00.000Z',
    });
    t.after(() => lock.release());
    const held = await checkDatabase(path);
    assert.equal(held.status, 'ok', held.detail);
    assert.match(
      held.detail,
      new RegExp(
        `; in use by homeostat pid ${process.pid} on .* \\(node id kettle, since 2026-11-30T16:00:00\\.000Z\\)$`,
      ),
    );
    lock.release();
    assert.match((await checkDatabase(path)).detail, /; no daemon running on it$/);
  });

  test('daemon stopped: the check leaves no -wal or -shm behind (they would be owned by whoever ran it)', async () => {
    const dir = tempDir();
    const path = join(dir, 'homeostat.db');
    openStore({ path, logger: pino({ level: 'silent' }), nowMs: () => 0 }).db.close();
    assert.deepEqual(readdirSync(dir), ['homeostat.db']);
    assert.equal((await checkDatabase(path)).status, 'ok');
    assert.deepEqual(readdirSync(dir), ['homeostat.db']);
  });

  test('a file that is not a database: fail, left where it is', async () => {
    const path = join(tempDir(), 'homeostat.db');
    writeFileSync(path, 'x'.repeat(4096));
    const result = await checkDatabase(path);
    assert.equal(result.status, 'fail');
    assert.match(result.fix ?? '', /damaged/);
    assert.throws(() => new Database(path, { readonly: true }).pragma('quick_check'));
  });

  test('directory not writable: fail, the fix names StateDirectory', async () => {
    const result = await checkDatabase(join(tempDir(), 'homeostat.db'), { canWrite: async () => false });
    assert.equal(result.status, 'fail');
    assert.match(result.fix ?? '', /StateDirectory=homeostat/);
  });
});

describe('systemd notify check', () => {
  function fakeSocket(error?: Error) {
    const sent: string[] = [];
    const socket: DatagramSocket = {
      send: (buf, offset, length, _path, callback) => {
        sent.push(buf.subarray(offset, offset + length).toString());
        callback(error);
      },
      close: () => undefined,
      on: () => undefined,
    };
    return { sent, socketFactory: () => socket };
  }

  test('NOTIFY_SOCKET unset: skipped, not running under systemd', () => {
    const result = checkNotify({});
    assert.equal(result.status, 'skip');
    assert.match(result.detail, /not running under systemd/);
  });

  test('a socket that accepts datagrams: ok, and READY is never sent', () => {
    const { sent, socketFactory } = fakeSocket();
    const result = checkNotify(
      { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '1' },
      { socketFactory },
    );
    assert.equal(result.status, 'ok');
    assert.ok(sent.length > 0);
    assert.ok(!sent.some((m) => m.includes('READY')), sent.join());
  });

  test('a socket that refuses: fail with a fix', () => {
    const { socketFactory } = fakeSocket(new Error('send -111'));
    const result = checkNotify({ NOTIFY_SOCKET: '/run/systemd/notify' }, { socketFactory });
    assert.equal(result.status, 'fail');
    assert.match(result.fix ?? '', /NotifyAccess=main/);
  });

  test('a relative path: fail', () => {
    const result = checkNotify({ NOTIFY_SOCKET: 'notify' });
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /absolute path/);
  });
});

describe('homeostat doctor', () => {
  test('output: ✓/✗/– lines, a fix line after each failure', () => {
    assert.deepEqual(formatCheck({ name: 'x', status: 'ok', detail: 'fine' }), ['✓ x: fine']);
    assert.deepEqual(formatCheck({ name: 'x', status: 'skip', detail: 'n/a' }), ['– x: n/a']);
    assert.deepEqual(formatCheck({ name: 'x', status: 'fail', detail: 'a\nb', fix: 'do y' }), [
      '✗ x: a',
      '    b',
      '  fix: do y',
    ]);
  });

  test('a simulated config without mqtt, outside systemd: everything ok or skipped, exit 0', async () => {
    const lines: string[] = [];
    // A free port: 8734 may be taken on the machine running the tests.
    const http = `http: { port: ${await freePort()} }`;
    const code = await doctorCommand(
      { configPath: configFile({ top: [http] }), dbPath: join(tempDir(), 'homeostat.db'), env: {} },
      (line) => lines.push(line),
    );
    assert.equal(code, 0, lines.join('\n'));
    assert.deepEqual(
      lines.map((l) => l.split(':')[0]),
      [
        '✓ config',
        '– GPIO',
        '– 1-Wire',
        '– kernel sensors (IIO, hwmon)',
        '– MQTT broker',
        '✓ HTTP API',
        '– alert channels',
        '✓ database',
        '– systemd notify',
      ],
    );
  });

  test('a broken config: exit 1, the other config-dependent checks skipped', async () => {
    const path = join(tempDir(), 'bad.yaml');
    writeFileSync(path, 'version: 2\n');
    const lines: string[] = [];
    const code = await doctorCommand({ configPath: path, dbPath: join(tempDir(), 'h.db'), env: {} }, (line) =>
      lines.push(line),
    );
    assert.equal(code, 1);
    assert.match(lines[0]!, /^✗ config: /);
    assert.ok(lines.some((l) => l.startsWith('  fix: ')));
    assert.ok(lines.some((l) => l.startsWith('– GPIO, 1-Wire, MQTT broker')));
  });

  test('the CLI runs it: exit 0 on a config without mqtt', () => {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'doctor', '--config', configFile(), '--db', join(tempDir(), 'h.db')],
      { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NOTIFY_SOCKET: '' } },
    );
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^✓ config: /m);
  });
});
