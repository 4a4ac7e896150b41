/**
 * `homeostat init` as a function: flags mode, scripted interactive answers, the refusals
 * (existing file, no relay pin, wrong values), the simulated fallback and how the file is
 * written. The generated configs' validity over every fixture tree is in validates.test.ts.
 */
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { isServiceConfigPath } from '../../src/init/plan.js';
import { invocationOf } from '../../src/init/report.js';
import { tempDir } from '../support/tmp.js';
import { fixture, runInit, scripted } from './helpers.js';

/** The file as a checked config; fails the test when it does not validate. */
function loaded(path: string): Config {
  const result = loadConfigFile(path);
  assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  return result.config;
}

describe('flags mode (--yes, or no terminal)', () => {
  test('given one probe and --relay-pin 17: the probe, GPIO17, setpoint 20, the effect watch on', async (t) => {
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', relayPin: '17' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    const config = loaded(run.path);
    assert.equal(config.node.id, 'raspberrypi');
    assert.deepEqual(config.sensors.room_temp, {
      kind: 'ds18b20',
      periodS: 10,
      plausible: { min: -20, max: 60 },
      maxRatePerS: 1,
      staleAfterS: 30,
    });
    const heater = config.actuators.room_heater!;
    assert.equal(heater.kind, 'gpio_relay');
    assert.equal(heater.kind === 'gpio_relay' && heater.bcm, 17);
    assert.equal(heater.safeState, 'off');
    const room = config.loops.room!;
    assert.equal(room.setpoint, 20);
    assert.equal(room.sensor, 'room_temp');
    assert.equal(room.raise, 'room_heater');
    assert.deepEqual(room.limits, { min: 5, max: 25 });
    assert.deepEqual(room.cutoff, { max: 30 });
    assert.deepEqual(room.effectWatch, { periodS: 1800, minChange: 0.5 });
    // Scanned another root than /sys: written so validate and doctor look there too.
    assert.equal(config.gpio.sysfsRoot, fixture('pi4-one-ds18b20'));
    assert.equal(config.storage.path, '/var/lib/homeostat/homeostat.db');
    // The only probe: named in a comment, so a replaced probe needs no edit.
    assert.match(run.text!, /^ {4}# address: 28-0316a2795bff$/m);
  });

  test('prints the listing, the file written and the next steps', async (t) => {
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', relayPin: '17' });
    const text = run.lines.join('\n');
    assert.match(text, /^ {2}1\) 28-0316a2795bff {2}23\.125 °C$/m);
    assert.match(text, /pinctrl-bcm2711" base 512 \(58 lines\), the main controller/);
    assert.ok(
      run.lines.includes(
        `wrote ${run.path}: loop room, DS18B20 28-0316a2795bff → relay on GPIO17 (header pin 11), setpoint 20 °C`,
      ),
      text,
    );
    const next = run.lines.slice(run.lines.indexOf('next:') + 1).join('\n');
    // Typed as this process would have to (homeostat on PATH or not, root or not): report.test.ts.
    const { command, asRoot } = invocationOf();
    const reading = asRoot ? `sudo ${command}` : command;
    assert.ok(next.includes(`  ${reading} validate ${run.path} `), next);
    assert.ok(next.includes(`  ${reading} doctor ${run.path} `), next);
    assert.ok(next.includes(`  sudo ${command} install-service --config ${run.path} `), next);
  });

  test('--sensor, --setpoint and --loop: that probe (written), that setpoint, ids after the loop', async (t) => {
    const run = await runInit(t, {
      tree: 'pi5-two-ds18b20',
      sensor: '28-3C01D607D4A1',
      relayPin: '22',
      setpoint: '18.5',
      loop: 'living_room',
    });
    assert.equal(run.code, 0, run.lines.join('\n'));
    const config = loaded(run.path);
    assert.deepEqual(Object.keys(config.loops), ['living_room']);
    assert.equal(config.loops.living_room!.setpoint, 18.5);
    assert.equal(config.loops.living_room!.name, 'Living room');
    const probe = config.sensors.living_room_temp!;
    assert.equal(probe.kind === 'ds18b20' && probe.address, '28-3c01d607d4a1');
    const heater = config.actuators.living_room_heater!;
    assert.equal(heater.kind === 'gpio_relay' && heater.bcm, 22);
  });

  test('several probes and no --sensor: the first, its address written, and said so', async (t) => {
    const run = await runInit(t, { tree: 'pi5-two-ds18b20', relayPin: '17' });
    assert.equal(run.code, 0);
    const probe = loaded(run.path).sensors.room_temp!;
    assert.equal(probe.kind === 'ds18b20' && probe.address, '28-0316a2795bff');
    assert.ok(
      run.lines.includes(
        'note: using 28-0316a2795bff, the first of 2 probes (--sensor ADDRESS picks another)',
      ),
    );
  });

  test('GPIO chips but no 1-Wire yet: a DS18B20 without address, the only one once it is wired', async (t) => {
    const run = await runInit(t, { tree: 'pi4-bookworm', relayPin: '17' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    const probe = loaded(run.path).sensors.room_temp!;
    assert.equal(probe.kind, 'ds18b20');
    assert.equal(probe.kind === 'ds18b20' && probe.address, undefined);
    assert.match(run.text!, /# No probe was found when init ran/);
    assert.match(run.lines[0]!, /^1-Wire: not enabled .*dtoverlay=w1-gpio/);
  });

  test('--sensor naming a probe not on the bus: written, with a note', async (t) => {
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', sensor: '28-000000000001', relayPin: '17' });
    assert.equal(run.code, 0);
    assert.match(run.text!, /^ {4}address: 28-000000000001 /m);
    assert.ok(
      run.lines.includes('note: 28-000000000001 is not on the 1-Wire bus now; doctor will look for it again'),
    );
  });

  test('a pin with another common use: accepted, with a note', async (t) => {
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', relayPin: '14' });
    assert.equal(run.code, 0);
    assert.ok(run.lines.some((l) => /^note: GPIO14 \(header pin 8\) is also the serial console TX/.test(l)));
  });

  test('GPIO chips but no main controller: written, with a note naming gpio.chipLabel', async (t) => {
    const run = await runInit(t, { tree: 'expanders-only', relayPin: '17' });
    assert.equal(run.code, 0);
    assert.ok(
      run.lines.some((l) => /^note: none of the GPIO chips .* gpio\.chipLabel or gpio\.base/.test(l)),
    );
  });

  test('1-Wire but no GPIO chips: written, with a note that the relay needs a Pi', async (t) => {
    const run = await runInit(t, { tree: 'w1-two-sensors', relayPin: '17' });
    assert.equal(run.code, 0);
    assert.ok(run.lines.some((l) => /^note: no GPIO chips here: the relay on GPIO17/.test(l)));
  });
});

describe('refusals: nothing written', () => {
  const table: [what: string, opts: Parameters<typeof runInit>[1], code: number, message: RegExp][] = [
    [
      'hardware and no --relay-pin: never a guessed pin',
      { tree: 'pi4-one-ds18b20' },
      2,
      /^init: no --relay-pin given: .*e\.g\. --relay-pin 17; init never guesses a pin/,
    ],
    ['GPIO chips only, no --relay-pin', { tree: 'pi5-bookworm' }, 2, /--relay-pin/],
    [
      '--relay-pin 4: the 1-Wire data line',
      { tree: 'pi4-one-ds18b20', relayPin: '4' },
      2,
      /^init: --relay-pin: GPIO4 .*1-Wire/,
    ],
    [
      '--relay-pin 30: not on the header',
      { tree: 'pi4-one-ds18b20', relayPin: '30' },
      2,
      /GPIO30 is not on the 40-pin header/,
    ],
    ['--relay-pin abc', { tree: 'pi4-one-ds18b20', relayPin: 'abc' }, 2, /"abc" is not a BCM GPIO number/],
    [
      '--setpoint 40: outside the room limits',
      { tree: 'pi4-one-ds18b20', relayPin: '17', setpoint: '40' },
      2,
      /^init: --setpoint: setpoint 40 °C is outside 5\.\.25 °C/,
    ],
    ['--setpoint warm', { tree: 'no-chips', setpoint: 'warm' }, 2, /"warm" is not a number/],
    ['--loop Living-Room', { tree: 'no-chips', loop: 'Living-Room' }, 2, /^init: --loop: .*lowercase/],
    [
      '--sensor probe1',
      { tree: 'pi4-one-ds18b20', sensor: 'probe1', relayPin: '17' },
      2,
      /28-0316a2795bff\) or sim/,
    ],
  ];
  for (const [what, opts, code, message] of table) {
    test(`${what}: exit ${code}, one line saying why`, async (t) => {
      const run = await runInit(t, opts);
      assert.equal(run.code, code, run.lines.join('\n'));
      assert.match(run.lines.at(-1)!, message);
      assert.equal(run.text, undefined);
    });
  }

  test('an existing file: exit 1 before any scan or question, one line naming another way, file untouched', async (t) => {
    const path = join(tempDir(t), 'config.yaml');
    writeFileSync(path, 'mine\n');
    const ask = scripted(['1', '17', '20']);
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', relayPin: '17', outPath: path }, { ask });
    assert.equal(run.code, 1);
    assert.deepEqual(run.lines, [
      `init: ${path} exists; nothing written (init never overwrites a config): give another path, homeostat init FILE (or --out FILE)`,
    ]);
    assert.deepEqual(ask.questions, []);
    assert.equal(readFileSync(path, 'utf8'), 'mine\n');
  });

  test('a path that cannot be created: exit 1 before any question, saying why and what to do', async (t) => {
    const file = join(tempDir(t), 'not-a-dir');
    writeFileSync(file, '');
    const ask = scripted(['1', '17', '20']);
    const path = join(file, 'homeostat', 'config.yaml');
    const run = await runInit(t, { tree: 'pi4-one-ds18b20', outPath: path }, { ask });
    assert.equal(run.code, 1);
    assert.deepEqual(run.lines, [
      `init: cannot write ${path}: ${file} is not a directory; nothing written: ` +
        'run it with sudo for /etc/homeostat, or give a path you can write: homeostat init FILE',
    ]);
    assert.deepEqual(ask.questions, []);
  });

  test('a directory at the path counts as existing too', async (t) => {
    const path = join(tempDir(t), 'config.yaml');
    mkdirSync(path);
    const run = await runInit(t, { tree: 'no-chips', outPath: path });
    assert.equal(run.code, 1);
    assert.match(run.lines[0]!, /exists; nothing written/);
  });
});

describe('interactive: scripted answers', () => {
  test('given answers 2, 17, 21.5: the second probe (written), GPIO17, 21.5 °C; defaults in brackets', async (t) => {
    const ask = scripted(['2', '17', '21.5']);
    const run = await runInit(t, { tree: 'pi5-two-ds18b20' }, { ask });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.deepEqual(ask.questions, [
      'Which probe does loop room read? 1..2 or an address [1]: ',
      // No default: the pin is never guessed.
      'Relay pin: the GPIO (BCM number, e.g. 17) of the relay that switches the heater: ',
      'Setpoint, °C [20]: ',
    ]);
    const config = loaded(run.path);
    const probe = config.sensors.room_temp!;
    assert.equal(probe.kind === 'ds18b20' && probe.address, '28-3c01d607d4a1');
    const heater = config.actuators.room_heater!;
    assert.equal(heater.kind === 'gpio_relay' && heater.bcm, 17);
    assert.equal(config.loops.room!.setpoint, 21.5);
    // The probe with the bad contact: chosen all the same, with a word about it.
    assert.ok(
      run.lines.includes(
        'note: 28-3c01d607d4a1 gave no reading when init ran: check its wiring; doctor reads it again',
      ),
    );
  });

  test('empty answers take the defaults; flags are the defaults', async (t) => {
    const ask = scripted(['', '', '']);
    const run = await runInit(
      t,
      { tree: 'pi5-two-ds18b20', sensor: '28-3c01d607d4a1', relayPin: '23', setpoint: '18' },
      { ask },
    );
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.deepEqual(
      ask.questions.map((q) => /\[(.*)\]/.exec(q)?.[1]),
      ['2', '23', '18'],
    );
    const config = loaded(run.path);
    const heater = config.actuators.room_heater!;
    assert.equal(heater.kind === 'gpio_relay' && heater.bcm, 23);
    assert.equal(config.loops.room!.setpoint, 18);
  });

  test('an address as the answer, and a wrong answer asked again with the reason', async (t) => {
    const ask = scripted(['9', '28-3c01d607d4a1', '4', 'x', '17', '30', '19']);
    const run = await runInit(t, { tree: 'pi5-two-ds18b20' }, { ask });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.equal(ask.questions.length, 7);
    const reasons = run.lines.filter(
      (l) => l.startsWith('  ') && !/^ {2}(\d\)|gpiochip|homeostat|sudo|node)/.test(l),
    );
    assert.equal(reasons.length, 4, reasons.join('\n'));
    assert.match(reasons[0]!, /"9": answer a number from 1 to 2/);
    assert.match(reasons[1]!, /GPIO4 .*1-Wire/);
    assert.match(reasons[2]!, /"x" is not a BCM GPIO number/);
    assert.match(reasons[3]!, /outside 5\.\.25/);
    const config = loaded(run.path);
    assert.equal(config.loops.room!.setpoint, 19);
  });

  test('an empty answer to the relay pin without --relay-pin is asked again, never a default', async (t) => {
    const ask = scripted(['', '', '17', '']);
    const run = await runInit(t, { tree: 'pi4-one-ds18b20' }, { ask });
    assert.equal(run.code, 0);
    assert.ok(run.lines.includes('  an answer is needed'));
  });

  test('three wrong answers: exit 1 with the reason, nothing written', async (t) => {
    const ask = scripted(['1', '99', '99', '99']);
    const run = await runInit(t, { tree: 'pi4-one-ds18b20' }, { ask });
    assert.equal(run.code, 1);
    assert.match(run.lines.at(-1)!, /^init: GPIO99 is not on the 40-pin header.*; nothing written$/);
    assert.equal(run.text, undefined);
  });

  test('input closed (Ctrl-D) mid-way: exit 1, cancelled, nothing written', async (t) => {
    const run = await runInit(t, { tree: 'pi4-one-ds18b20' }, { ask: scripted(['1']) });
    assert.equal(run.code, 1);
    assert.equal(run.lines.at(-1), 'init: cancelled (no answer); nothing written');
    assert.equal(run.text, undefined);
  });

  test('no probe found: only the pin and the setpoint are asked', async (t) => {
    const ask = scripted(['17', '']);
    const run = await runInit(t, { tree: 'pi4-bookworm' }, { ask });
    assert.equal(run.code, 0);
    assert.equal(ask.questions.length, 2);
    assert.match(ask.questions[0]!, /^Relay pin/);
  });

  test('no hardware: nothing asked, a simulated room', async (t) => {
    const ask = scripted([]);
    const run = await runInit(t, { tree: 'no-chips' }, { ask });
    assert.equal(run.code, 0);
    assert.deepEqual(ask.questions, []);
    assert.equal(loaded(run.path).sensors.room_temp!.kind, 'simulated');
  });
});

describe('the simulated fallback', () => {
  const table: [what: string, opts: Parameters<typeof runInit>[1], note: RegExp][] = [
    ['no 1-Wire, no GPIO chips', { tree: 'no-chips' }, /no DS18B20 and no GPIO chips found/],
    ['an empty 1-Wire bus, no GPIO chips', { tree: 'w1-bus-empty' }, /no DS18B20 and no GPIO chips found/],
    ['--sensor sim on a Pi with hardware', { tree: 'pi4-one-ds18b20', sensor: 'sim' }, /--sensor sim/],
  ];
  for (const [what, opts, note] of table) {
    test(`${what}: says so, writes a simulated room without asking for a pin`, async (t) => {
      const run = await runInit(t, opts);
      assert.equal(run.code, 0, run.lines.join('\n'));
      assert.ok(run.lines.some((l) => l.startsWith('note: ') && note.test(l)));
      const config = loaded(run.path);
      assert.equal(config.sensors.room_temp!.kind, 'simulated');
      assert.equal(config.actuators.room_heater!.kind, 'simulated_relay');
      assert.deepEqual(config.loops.room!.effectWatch, { periodS: 1800, minChange: 0.5 });
      assert.match(run.text!, /^# Hardware it needs: none\./m);
      const { command, asRoot } = invocationOf();
      const run60 = `${asRoot ? 'sudo ' : ''}${command} run --config ${run.path} --speed 60`;
      assert.ok(
        run.lines.some((l) => l.includes(run60)),
        run.lines.join('\n'),
      );
    });
  }
});

describe("the simulated room's database", () => {
  test('given the service config directory (CONFIGURATION_DIRECTORY), then storage.path is the service database', async (t) => {
    const dir = tempDir(t);
    const previous = process.env.CONFIGURATION_DIRECTORY;
    process.env.CONFIGURATION_DIRECTORY = dir;
    t.after(() => {
      if (previous === undefined) delete process.env.CONFIGURATION_DIRECTORY;
      else process.env.CONFIGURATION_DIRECTORY = previous;
    });
    const run = await runInit(t, { tree: 'no-chips', outPath: join(dir, 'config.yaml') });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.equal(loaded(run.path).storage.path, '/var/lib/homeostat/homeostat.db');
  });

  test('given a file elsewhere (a user trying it out), then no storage.path: the default its user can write', async (t) => {
    const run = await runInit(t, { tree: 'no-chips' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.equal(loaded(run.path).storage.path, undefined);
    assert.doesNotMatch(run.text!, /^storage:/m);
  });

  const paths: [outPath: string, configurationDirectory: string | undefined, service: boolean][] = [
    ['/etc/homeostat/config.yaml', undefined, true],
    ['/etc/homeostat-old/config.yaml', undefined, false],
    ['/home/pi/room.yaml', undefined, false],
    ['/srv/hs/config.yaml', '/srv/hs/', true],
  ];
  for (const [outPath, configurationDirectory, service] of paths) {
    test(`isServiceConfigPath(${outPath}, ${configurationDirectory}) is ${service}`, () => {
      assert.equal(isServiceConfigPath(outPath, configurationDirectory), service);
    });
  }
});

describe('the file', () => {
  test('missing parent directories are created 0750, the file 0640', async (t) => {
    const root = tempDir(t);
    const path = join(root, 'etc', 'homeostat', 'config.yaml');
    const run = await runInit(t, { tree: 'no-chips', outPath: path });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.equal(statSync(join(root, 'etc')).mode & 0o777, 0o750);
    assert.equal(statSync(join(root, 'etc', 'homeostat')).mode & 0o777, 0o750);
    assert.equal(statSync(path).mode & 0o777, 0o640);
  });

  test('an existing directory keeps its mode; the file takes its group (an installed /etc/homeostat)', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root to give the directory another group');
    const dir = join(tempDir(t), 'homeostat');
    mkdirSync(dir, { mode: 0o755 });
    chownSync(dir, 0, 4242);
    const path = join(dir, 'config.yaml');
    const run = await runInit(t, { tree: 'no-chips', outPath: path });
    assert.equal(run.code, 0);
    assert.equal(statSync(dir).mode & 0o777, 0o755);
    assert.equal(statSync(path).gid, 4242);
    assert.equal(statSync(path).mode & 0o777, 0o640);
  });

  test('a relative path is written where the command runs, and named in full', async (t) => {
    const dir = tempDir(t);
    const cwd = process.cwd();
    process.chdir(dir);
    t.after(() => process.chdir(cwd));
    const run = await runInit(t, {
      tree: undefined,
      sysfsRoot: join(cwd, 'test/fixtures/sys/no-chips'),
      outPath: 'sub/my.yaml',
    });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.ok(run.lines.some((l) => l.startsWith(`wrote ${join(dir, 'sub/my.yaml')}:`)));
  });
});
