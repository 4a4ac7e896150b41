/**
 * `homeostat safe`, run by systemd's ExecStopPost= after the daemon died: every GPIO relay of
 * the config ends at its safe level, on a fixture sysfs tree (a Pi 4 on Bookworm: BCM 0 is
 * sysfs 512) where a killed daemon left pins ON. The tree's files are plain files, so the
 * kernel's side of sysfs is simulated by `fakeKernel` (export creates the pin, `high`/`low`
 * set the raw level, `active_low` inverts reads and writes), which also records every raw
 * level a pin is driven to while it is an output — to show that nothing glitches.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  driveRelaySafe,
  fileSysfsIo,
  planFromBrokenText,
  type SysfsIo,
  safeCommand,
} from '../../src/commands/safe.js';
import { currentOwner, DaemonLock } from '../../src/store/daemon-lock.js';
import { tempTree } from '../drivers/gpio/fakes.js';
import { BASE, configFile, fakeKernel, pi4, rawLevel } from './safe-fixtures.js';

async function runSafe(configPath: string, io: SysfsIo, sysfsRoot: string, pinTimeoutMs?: number) {
  // stdout and stderr lines together, in order.
  const lines: string[] = [];
  const push = (line: string) => void lines.push(line);
  const code = await safeCommand({ configPath, sysfsRoot, io, env: {}, pinTimeoutMs, note: push }, push);
  return { code, lines, text: lines.join('\n') };
}

type Pins = Parameters<typeof pi4>[0];

/**
 * Given `pins` on a Pi 4 as a killed daemon left them and a config with `relays` (lines of the
 * `actuators:` section), runs `homeostat safe` on the fake kernel.
 */
async function safeOnPi4(
  pins: Pins,
  relays: string,
  kernelOpts: Parameters<typeof fakeKernel>[1] = {},
  pinTimeoutMs?: number,
) {
  const root = pi4(pins);
  const kernel = fakeKernel(root, kernelOpts);
  const result = await runSafe(configFile(root, relays), kernel.io, root, pinTimeoutMs);
  return { root, kernel, result };
}

/**
 * A config without GPIO relays in a new temp dir: an MQTT sensor, the MQTT `actuators` (lines of
 * the section), loop `room` with `roomActuators` (`raise: heater…`), the broker at `url`.
 */
function mqttOnlyConfigFile(url: string, actuators: string, roomActuators: string) {
  const root = tempTree({ placeholder: '' });
  const path = join(root, 'config.yaml');
  writeFileSync(
    path,
    `version: 1
node: { id: n }
mqtt: { url: '${url}' }
sensors: { t: { kind: mqtt, topic: t } }
actuators:
${actuators}
loops:
  room: { sensor: t, ${roomActuators}, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`,
  );
  return { root, path };
}

const FOUR_RELAYS = `  heater: { kind: gpio_relay, bcm: 17 }
  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }
  fan: { kind: gpio_relay, bcm: 22 }
  lamp: { kind: gpio_relay, bcm: 23, activeLow: false }`;

describe('homeostat safe: GPIO relays a killed daemon left ON', () => {
  test('given relays left ON (active-low and active-high), one already off, when safe runs, then every pin is released and exit is 0', async () => {
    const { root, result } = await safeOnPi4(
      {
        17: { direction: 'out', value: 1, activeLow: 1 }, // heater ON: pin low energises the board
        27: { direction: 'out', value: 1, activeLow: 0 }, // cooler ON: pin high
        22: { direction: 'out', value: 0, activeLow: 1 }, // fan already off (pin high)
        23: { direction: 'out', value: 1, activeLow: 0 }, // lamp ON
      },
      FOUR_RELAYS,
    );
    assert.equal(result.code, 0, result.text);
    assert.deepEqual(
      [17, 27, 22, 23].map((bcm) => rawLevel(root, bcm)),
      [1, 0, 1, 0],
      'released: active-low pins high, active-high pins low',
    );
    assert.match(
      result.text,
      /^heater \(gpio_relay BCM 17 = sysfs 529, active-low\): was ON \(pin low\), now OFF \(pin high\)$/m,
    );
    assert.match(
      result.text,
      /^cooler \(gpio_relay BCM 27 = sysfs 539\): was ON \(pin high\), now OFF \(pin low\)$/m,
    );
    assert.match(result.text, /^fan .*: already OFF \(pin high\), its safe state; not written$/m);
    assert.match(result.text, /^homeostat safe: 4 of 4 GPIO relay\(s\) at their safe level$/m);
  });

  test('a pin already at its safe level is not written at all (no glitch), and the others once each', async () => {
    const { kernel, result } = await safeOnPi4(
      {
        17: { direction: 'out', value: 1, activeLow: 1 },
        22: { direction: 'out', value: 0, activeLow: 1 },
      },
      '  heater: { kind: gpio_relay, bcm: 17 }\n  fan: { kind: gpio_relay, bcm: 22 }',
    );
    assert.equal(result.code, 0, result.text);
    assert.deepEqual(kernel.writes, [['class/gpio/gpio529/value', '0']]);
    assert.deepEqual(kernel.rawLevels.get(529), [1], 'one transition, straight to released');
  });

  test('given a pin the daemon never exported, when safe runs, then it is exported straight at the released level (never energised on the way)', async () => {
    const { root, kernel, result } = await safeOnPi4({}, '  heater: { kind: gpio_relay, bcm: 17 }');
    assert.equal(result.code, 0, result.text);
    assert.equal(rawLevel(root, 17), 1);
    assert.deepEqual(kernel.writes.slice(0, 2), [
      ['class/gpio/export', '529'],
      ['class/gpio/gpio529/direction', 'high'],
    ]);
    assert.deepEqual(kernel.rawLevels.get(529), [1, 1], 'every level it was driven to is the released one');
    assert.equal(readFileSync(join(root, 'class/gpio/gpio529/active_low'), 'utf8').trim(), '1');
    assert.match(result.text, /^heater .*: was not an output; now an output at OFF \(pin high\)$/m);
  });

  test('an exported input (floating: the board follows its pull resistor) becomes an output at the released level', async () => {
    const { root, kernel, result } = await safeOnPi4(
      { 27: { direction: 'in', value: 0, activeLow: 0 } },
      '  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }',
    );
    assert.equal(result.code, 0, result.text);
    assert.equal(rawLevel(root, 27), 0);
    assert.equal(kernel.writes[0]?.[1], 'low');
  });

  test('safeState: on is honoured (a circulation pump that must keep running)', async () => {
    const { root, result } = await safeOnPi4(
      { 17: { direction: 'out', value: 0, activeLow: 1 } },
      '  pump: { kind: gpio_relay, bcm: 17, safeState: on }',
    );
    assert.equal(result.code, 0, result.text);
    assert.equal(rawLevel(root, 17), 0, 'active-low: energised = pin low');
    assert.match(result.text, /now ON \(pin low\)/);
  });

  test("a pin whose active_low file disagrees with the config is judged by its raw level (the daemon's last word)", async () => {
    // Config says active-high, the pin was exported active-low: raw 1 is what the board sees.
    const { root, result } = await safeOnPi4(
      { 27: { direction: 'out', value: 0, activeLow: 1 } },
      '  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }',
    );
    assert.equal(result.code, 0, result.text);
    assert.equal(rawLevel(root, 27), 0);
  });
});

describe('homeostat safe: failures are reported, and the other pins are still driven', () => {
  test('given one pin whose writes fail, when safe runs, then the others are released and exit is 1 naming it', async () => {
    const { root, result } = await safeOnPi4(
      {
        17: { direction: 'out', value: 1, activeLow: 1 },
        27: { direction: 'out', value: 1, activeLow: 0 },
        22: { direction: 'out', value: 1, activeLow: 1 },
      },
      FOUR_RELAYS,
      { fail: BASE + 27 },
    );
    assert.equal(result.code, 1);
    assert.deepEqual(
      [17, 22, 23].map((bcm) => rawLevel(root, bcm)),
      [1, 1, 0],
    );
    assert.match(result.text, /^cooler \(gpio_relay BCM 27 = sysfs 539\): FAILED, not driven safe: EIO/m);
    assert.match(result.text, /^homeostat safe: 3 of 4 GPIO relay\(s\) at their safe level; 1 FAILED$/m);
  });

  test('a pin claimed by a kernel driver (export: EBUSY) fails with what to check; the others are released', async () => {
    const { root, result } = await safeOnPi4(
      { 17: { direction: 'out', value: 1, activeLow: 1 } },
      '  heater: { kind: gpio_relay, bcm: 17 }\n  probe_pin: { kind: gpio_relay, bcm: 4 }',
      { busy: BASE + 4 },
    );
    assert.equal(result.code, 1);
    assert.equal(rawLevel(root, 17), 1);
    assert.match(
      result.text,
      /^probe_pin \(gpio_relay BCM 4 = sysfs 516, active-low\): FAILED, not driven safe: busy \(.*\): the pin is claimed by a kernel driver/m,
    );
  });

  test('a pin whose sysfs write never returns does not hang safe: it fails at its deadline, the others are released', async () => {
    const { root, result } = await safeOnPi4(
      {
        17: { direction: 'out', value: 1, activeLow: 1 },
        27: { direction: 'out', value: 1, activeLow: 0 },
      },
      '  heater: { kind: gpio_relay, bcm: 17 }\n  cooler: { kind: gpio_relay, bcm: 27, activeLow: false }',
      { hang: BASE + 17 },
      // Long enough for a healthy pin on a loaded machine (a few ms alone; 50 ms failed beside a CPU hog).
      1_000,
    );
    assert.equal(result.code, 1);
    assert.equal(rawLevel(root, 27), 0);
    assert.match(result.text, /^heater .*: FAILED, not driven safe: no answer from sysfs within 1000 ms/m);
  });

  test('a pin that cannot be read back at the safe level counts as failed', async () => {
    const root = pi4({ 17: { direction: 'out', value: 1, activeLow: 1 } });
    const stuck: SysfsIo = { ...fileSysfsIo, write: async () => {} }; // writes vanish
    const outcome = await driveRelaySafe(
      { id: 'heater', bcm: 17, activeLow: true, safeLevel: 0 },
      { sysfsRoot: root, io: stuck },
    );
    assert.deepEqual(outcome, {
      id: 'heater',
      ok: false,
      sysfsNumber: 529,
      error: 'wrote the safe level but the pin reads back 0',
    });
  });

  test('no GPIO chips under the sysfs root: every relay fails with the reason, exit 1', async () => {
    const root = tempTree({ placeholder: '' });
    const result = await runSafe(
      configFile(root, '  heater: { kind: gpio_relay, bcm: 17 }'),
      fileSysfsIo,
      root,
    );
    assert.equal(result.code, 1);
    assert.match(result.text, /heater .*FAILED, not driven safe: no GPIO chips under/);
  });
});

describe('homeostat safe: configs', () => {
  test('a config without GPIO relays and a broker that refuses: exit 0, nothing to drive, and which plugs have a dead man’s switch', async () => {
    const { root, path } = mqttOnlyConfigFile(
      'mqtt://127.0.0.1:1',
      `  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
  cooler: { kind: mqtt_switch, preset: zigbee2mqtt, device: zigbee2mqtt/cooler }`,
      'raise: heater, lower: cooler',
    );
    const result = await runSafe(path, fileSysfsIo, root);
    assert.equal(result.code, 0, result.text);
    assert.match(result.text, /^homeostat safe: no GPIO relay in the config, nothing to drive$/m);
    assert.match(
      result.text,
      /^heater \(mqtt_switch\): not reached \(broker mqtt:\/\/127\.0\.0\.1:1: .*ECONNREFUSED.*\); turns itself off ≤ 600 s after its last ON \(Tasmota PulseTime\)$/m,
    );
    assert.match(
      result.text,
      /^cooler \(mqtt_switch\): not reached \(.*\); no dead man’s switch: if it was not reached, it stays as it is until homeostat is back \(deadManS 0\)$/m,
    );
  });

  test('a broker that accepts the connection and never answers does not hang safe: it gives up at its timeout', async (t) => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const port = (silent.address() as { port: number }).port;
    const { path } = mqttOnlyConfigFile(
      `mqtt://127.0.0.1:${port}`,
      '  heater: { kind: mqtt_switch, preset: tasmota, device: plug }',
      'raise: heater',
    );
    const lines: string[] = [];
    const code = await safeCommand({ configPath: path, env: {}, mqttTimeoutMs: 200 }, (l) => lines.push(l));
    assert.equal(code, 0);
    assert.match(
      lines.join('\n'),
      new RegExp(
        `^heater \\(mqtt_switch\\): not reached \\(broker mqtt://127\\.0\\.0\\.1:${port} did not answer within 200 ms\\)`,
        'm',
      ),
    );
  });

  test('the demo config (simulated only) needs nothing: exit 0', async () => {
    const result = await runSafe('config/demo.yaml', fileSysfsIo, '/nonexistent');
    assert.equal(result.code, 0, result.text);
  });

  test('given a config edited into an invalid one while the daemon ran, the relays it names are still released, and exit is 1', async () => {
    const root = pi4({ 17: { direction: 'out', value: 1, activeLow: 1 } });
    const kernel = fakeKernel(root);
    const path = configFile(root, '  heater: { kind: gpio_relay, bcm: 17 }');
    writeFileSync(path, readFileSync(path, 'utf8').replace('setpoint: 20', 'setpoint: 99'));
    const result = await runSafe(path, kernel.io, root);
    assert.equal(result.code, 1);
    assert.equal(rawLevel(root, 17), 1);
    assert.match(result.text, /^config: loops\.room\.setpoint: /m);
    assert.match(result.text, /config invalid; driving the 1 gpio_relay actuator\(s\) it names/);
  });

  test('a missing config file: exit 1, no pin driven, and it says so', async () => {
    const result = await runSafe('/nonexistent/config.yaml', fileSysfsIo, '/nonexistent');
    assert.equal(result.code, 1);
    assert.match(
      result.text,
      /cannot read any actuator: \/nonexistent\/config\.yaml: .*config file not found.*: no pin driven/,
    );
  });

  const brokenCases: [string, string, ReturnType<typeof planFromBrokenText>][] = [
    [
      'defaults as in the schema, gpio block kept',
      'gpio: { base: 0 }\nactuators: { h: { kind: gpio_relay, bcm: 4 }, c: { kind: gpio_relay, bcm: 5, activeLow: false, safeState: on } }',
      {
        relays: [
          { id: 'h', bcm: 4, activeLow: true, safeLevel: 0 },
          { id: 'c', bcm: 5, activeLow: false, safeLevel: 1 },
        ],
        pwms: [],
        sysfsRoot: '/sys',
        chip: { chipLabel: undefined, base: 0 },
        mqtt: [],
      },
    ],
    ['not YAML', 'actuators: [', undefined],
    [
      'a relay without a usable bcm is skipped',
      'actuators: { h: { kind: gpio_relay, bcm: "x" } }',
      {
        relays: [],
        pwms: [],
        sysfsRoot: '/sys',
        chip: { chipLabel: undefined, base: undefined },
        mqtt: [],
      },
    ],
    [
      'pwm outputs: safe level, polarity and period (periodMs, else frequencyHz) as given, never a guess; bad chip or channel skipped',
      'actuators: { f: { kind: pwm, channel: 1, safeLevel: 1, periodMs: 0.04 }, s: { kind: pwm, chip: 2, safeLevel: 1 }, x: { kind: pwm, chip: "0" }, ' +
        'h: { kind: pwm, channel: 2, frequencyHz: 25000, safeLevel: 0.5 }, i: { kind: pwm, channel: 3, periodMs: 2000, polarity: inversed, safeLevel: 1 }, ' +
        'n: { kind: pwm, channel: 4, safeLevel: "1", frequencyHz: 0 } }',
      {
        relays: [],
        pwms: [
          { id: 'f', chip: 0, channel: 1, safeLevel: 1, periodNs: 40_000, polarity: 'normal' },
          { id: 's', chip: 2, channel: 0, safeLevel: 1, polarity: 'normal' },
          { id: 'h', chip: 0, channel: 2, safeLevel: 0.5, periodNs: 40_000, polarity: 'normal' },
          { id: 'i', chip: 0, channel: 3, safeLevel: 1, periodNs: 2_000_000_000, polarity: 'inversed' },
          { id: 'n', chip: 0, channel: 4, safeLevel: Number.NaN, polarity: 'normal' },
        ],
        sysfsRoot: '/sys',
        chip: { chipLabel: undefined, base: undefined },
        mqtt: [],
      },
    ],
  ];
  for (const [name, text, expected] of brokenCases) {
    test(`planFromBrokenText: ${name}`, () => assert.deepEqual(planFromBrokenText(text), expected));
  }
});

describe('homeostat safe on the command line', () => {
  test('homeostat safe --config FILE --sysfs-root DIR: one line per actuator, exit 0', () => {
    // The CLI uses the real file operations: pin 17 is exported already (no kernel to simulate).
    const root = pi4({ 17: { direction: 'out', value: 0, activeLow: 1 } });
    const result = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli.ts',
        'safe',
        '--config',
        configFile(root, '  heater: { kind: gpio_relay, bcm: 17 }'),
        '--sysfs-root',
        root,
      ],
      {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, SERVICE_RESULT: 'signal', EXIT_CODE: 'killed', EXIT_STATUS: 'KILL' },
      },
    );
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      'homeostat safe: service ended (result signal, killed KILL)',
      'heater (gpio_relay BCM 17 = sysfs 529, active-low): already OFF (pin high), its safe state; not written',
      'homeostat safe: 1 of 1 GPIO relay(s) at their safe level',
    ]);
  });

  test('homeostat --help lists safe', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--help'], {
      encoding: 'utf8',
    });
    assert.match(result.stdout, /homeostat safe +\[--config FILE\]/);
  });
});

describe('homeostat safe while the database lock is held (ExecStopPost after a refused start, or after a hung daemon)', () => {
  const heaterOn = { 17: { direction: 'out', value: 1, activeLow: 1 } } as const;
  const heater = '  heater: { kind: gpio_relay, bcm: 17 }';
  const OURS = '0::/system.slice/homeostat.service\n';
  const BY_HAND = '0::/user.slice/user-1000.slice/session-3.scope\n';

  /** `homeostat safe` with the heater ON; the lock held by a daemon whose cgroup is `holderCgroup`. */
  async function safeWithLock(lock: { held: boolean; owner?: boolean; holderCgroup?: string | undefined }) {
    const root = pi4(heaterOn);
    const kernel = fakeKernel(root);
    const dbPath = join(tempTree({ placeholder: '' }), 'homeostat.db');
    const holderPid = 4242;
    const daemonLock = DaemonLock.acquire(dbPath, {
      ...currentOwner('greenhouse', Date.UTC(2026, 10, 30, 16)),
      pid: holderPid,
    });
    if (lock.owner === false) rmSync(`${dbPath}.owner`);
    if (!lock.held) daemonLock.release();
    const cgroupOf = (pid: number | 'self') =>
      pid === 'self' ? OURS : pid === holderPid ? lock.holderCgroup : undefined;
    const lines: string[] = [];
    try {
      const code = await safeCommand(
        { configPath: configFile(root, heater), dbPath, cgroupOf, sysfsRoot: root, io: kernel.io, env: {} },
        (l) => lines.push(l),
      );
      return { code, heaterPin: rawLevel(root, 17), text: lines.join('\n') };
    } finally {
      daemonLock.release();
    }
  }

  const LEFT_ON = 0; // active-low: pin low = heater on
  const RELEASED = 1;
  const cases = [
    {
      given: 'a daemon started by hand (another cgroup) holds it',
      lock: { held: true, holderCgroup: BY_HAND },
      pin: LEFT_ON,
    },
    {
      given: "a daemon another user started holds it (its /proc hidden by the unit's ProtectProc)",
      lock: { held: true, holderCgroup: undefined },
      pin: LEFT_ON,
    },
    {
      given: "the service's own daemon, hung and still alive, holds it (our cgroup)",
      lock: { held: true, holderCgroup: OURS },
      pin: RELEASED,
    },
    {
      given: 'a holder without an owner record',
      lock: { held: true, owner: false, holderCgroup: BY_HAND },
      pin: RELEASED,
    },
    {
      given: 'nobody holds it (its holder ended)',
      lock: { held: false, holderCgroup: BY_HAND },
      pin: RELEASED,
    },
  ];
  for (const { given, lock, pin } of cases) {
    test(`given ${given}, when safe runs, then the heater is ${pin === LEFT_ON ? 'left to that daemon' : 'released'} (exit 0)`, async () => {
      const result = await safeWithLock(lock);
      assert.equal(result.code, 0, result.text);
      assert.equal(result.heaterPin, pin, result.text);
      if (pin === LEFT_ON) {
        assert.match(
          result.text,
          /^homeostat safe: another homeostat pid 4242 on .* \(node id greenhouse, since 2026-11-30T16:00:00\.000Z\) is running on .*homeostat\.db; not touching the actuators it regulates$/,
        );
      } else {
        assert.doesNotMatch(result.text, /not touching/);
      }
    });
  }
});
