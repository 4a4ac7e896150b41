import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { stringify } from 'yaml';
import {
  formatPath,
  loadConfigFile,
  loadConfigFileOffThread,
  MAX_CONFIG_BYTES,
  parseConfigText,
} from '../../src/config/load.js';
import { SENSOR_KINDS } from '../../src/kinds/registry.js';

type Entries = Record<string, Record<string, unknown>>;
/** The base config as plain data the cases may edit freely. */
interface Editable {
  [key: string]: unknown;
  version?: unknown;
  node: unknown;
  simulation: { plants: Entries };
  sensors: Entries;
  actuators: Entries;
  loops: Entries;
}

/**
 * A small valid config: a room with a heater and a cooler (PID, heat_cool) and a box with a
 * continuous heater (hysteresis). Each broken case below changes one thing.
 */
function baseConfig(): Editable {
  return {
    version: 1,
    node: { id: 'test' },
    simulation: {
      plants: {
        room: { ambient: 10, timeConstantS: 600 },
        box: { ambient: 20, timeConstantS: 300 },
      },
    },
    sensors: {
      t_room: { kind: 'simulated', plant: 'room' },
      t_box: { kind: 'simulated', plant: 'box' },
    },
    actuators: {
      heater: { kind: 'simulated_relay', plant: 'room', gain: 20 },
      cooler: { kind: 'simulated_relay', plant: 'room', gain: -15 },
      box_heater: { kind: 'simulated_continuous', plant: 'box', gain: 10 },
    },
    loops: {
      room: {
        sensor: 't_room',
        raise: 'heater',
        lower: 'cooler',
        setpoint: 20,
        limits: { min: 5, max: 30 },
        controller: { type: 'pid', kp: 0.2 },
      },
      box: {
        sensor: 't_box',
        raise: 'box_heater',
        setpoint: 25,
        limits: { min: 0, max: 40 },
        controller: { type: 'hysteresis' },
      },
    },
  };
}

/** YAML text of the base config after `change`. */
function yamlWith(change: (config: Editable) => void): string {
  const config = baseConfig();
  change(config);
  return stringify(config);
}

describe('parseConfigText', () => {
  test('given the base config, when parsed, then it is valid', () => {
    const result = parseConfigText(yamlWith(() => {}));
    assert.deepEqual(result.ok ? [] : result.errors, []);
  });

  test('returns the text unchanged, for hashing into a generation', () => {
    const text = yamlWith(() => {});
    const result = parseConfigText(text);
    assert.ok(result.ok);
    assert.equal(result.text, text);
  });

  test('a file using only current key names has no warnings', () => {
    const result = parseConfigText(yamlWith(() => {}));
    assert.ok(result.ok);
    assert.deepEqual(result.warnings, []);
  });

  test('a key under its old name is read, with one `path: message (deprecated)` warning', () => {
    const result = parseConfigText(
      yamlWith((c) => {
        c.actuators.heater!.modulation = 'band';
        c.actuators.heater!.bandC = 0.4;
      }),
    );
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    const heater = result.config.actuators.heater;
    assert.deepEqual(heater?.kind === 'simulated_relay' && [heater.band, 'bandC' in heater], [0.4, false]);
    assert.deepEqual(result.warnings, [
      'actuators.heater.bandC: renamed band (same value): write band: 0.4 (deprecated)',
    ]);
  });

  // Each case: what is broken → the exact `path: message` line that must be reported.
  const cases: { name: string; text: string; sourceName?: string; expected: string }[] = [
    {
      name: 'unknown sensor',
      text: yamlWith((c) => {
        c.loops.room!.sensor = 't1';
      }),
      expected: 'loops.room.sensor: unknown sensor "t1"',
    },
    {
      name: 'unknown actuator',
      text: yamlWith((c) => {
        c.loops.room!.lower = 'fan';
      }),
      expected: 'loops.room.lower: unknown actuator "fan"',
    },
    {
      name: 'unknown plant',
      text: yamlWith((c) => {
        c.sensors.t_box!.plant = 'garage';
      }),
      expected: 'sensors.t_box.plant: unknown plant "garage"',
    },
    {
      name: 'unknown key, close to a known one',
      text: yamlWith((c) => {
        c.loops.room!.setpont = 21;
      }),
      expected: 'loops.room.setpont: unknown key (did you mean "setpoint"?)',
    },
    {
      name: 'unknown key, like nothing known',
      text: yamlWith((c) => {
        c.colour = 'blue';
      }),
      expected:
        'colour: unknown key (allowed: version, node, mqtt, gpio, storage, http, simulation, alerts, sensors, actuators, loops)',
    },
    {
      name: 'setpoint outside limits',
      text: yamlWith((c) => {
        c.loops.room!.setpoint = 35;
      }),
      expected: 'loops.room.setpoint: 35 is outside limits 5..30',
    },
    {
      name: 'mode the actuators cannot do',
      text: yamlWith((c) => {
        c.loops.box!.mode = 'cool';
      }),
      expected: 'loops.box.mode: mode "cool" is not allowed for this loop (allowed: off, heat)',
    },
    {
      name: 'humidity mode on a temperature loop',
      text: yamlWith((c) => {
        c.loops.room!.mode = 'auto';
      }),
      expected:
        'loops.room.mode: mode "auto" is not allowed for this loop (allowed: off, heat, cool, heat_cool)',
    },
    {
      name: 'actuator shared by two loops',
      text: yamlWith((c) => {
        c.loops.spare = { ...c.loops.box, sensor: 't_room', raise: 'heater', limits: { min: 5, max: 30 } };
      }),
      expected: 'loops.spare.raise: actuator "heater" is already used by loops.room.raise',
    },
    {
      name: 'actuator as both raise and lower of one loop',
      text: yamlWith((c) => {
        c.loops.box!.lower = 'box_heater';
      }),
      expected: `loops.box.lower: actuator "box_heater" is already this loop's raise actuator`,
    },
    {
      name: 'lower actuator that heats (wrong-sign gain)',
      text: yamlWith((c) => {
        c.actuators.cooler!.gain = 15;
      }),
      expected:
        'loops.room.lower: actuator "cooler" has gain 15 on plant "room"; a lower actuator needs a negative gain',
    },
    {
      name: 'raise actuator that cools (wrong-sign gain)',
      text: yamlWith((c) => {
        c.actuators.box_heater!.gain = -10;
      }),
      expected:
        'loops.box.raise: actuator "box_heater" has gain -10 on plant "box"; a raise actuator needs a positive gain',
    },
    {
      name: 'actuator on another plant than the sensor reads',
      text: yamlWith((c) => {
        c.actuators.box_heater!.plant = 'room';
      }),
      expected:
        'loops.box.raise: actuator "box_heater" drives plant "room" but sensor "t_box" reads plant "box"',
    },
    {
      name: 'band modulation under a hysteresis controller',
      text: yamlWith((c) => {
        c.actuators.heater!.modulation = 'band';
        c.loops.room!.controller = { type: 'hysteresis' };
      }),
      expected:
        'actuators.heater.modulation: modulation "band" needs a pid controller, but loops.room uses hysteresis (use modulation "window" or a pid controller)',
    },
    {
      name: 'band too wide for kp (kp · bandC ≥ 0.5)',
      text: yamlWith((c) => {
        c.actuators.heater!.modulation = 'band';
        c.actuators.heater!.bandC = 0.25;
        c.loops.room!.controller = { type: 'pid', kp: 2 };
      }),
      expected:
        'actuators.heater.bandC: band too wide for kp: kp 2 × bandC 0.25 = 0.5 (must be < 0.5, so bandC < 0.25 for loops.room)',
    },
    {
      name: 'band too wide for kp, on the lower actuator',
      text: yamlWith((c) => {
        c.actuators.cooler!.modulation = 'band';
        c.actuators.cooler!.bandC = 3;
      }),
      expected:
        'actuators.cooler.bandC: band too wide for kp: kp 0.2 × bandC 3 = 0.6 (must be < 0.5, so bandC < 2.5 for loops.room)',
    },
    {
      name: 'bandC not above 0',
      text: yamlWith((c) => {
        c.actuators.heater!.bandC = 0;
      }),
      expected: 'actuators.heater.bandC: must be > 0 (got 0)',
    },
    {
      name: 'band too wide for kp (kp · band ≥ 0.5), named as the file names it',
      text: yamlWith((c) => {
        c.actuators.heater!.modulation = 'band';
        c.actuators.heater!.band = 0.25;
        c.loops.room!.controller = { type: 'pid', kp: 2 };
      }),
      expected:
        'actuators.heater.band: band too wide for kp: kp 2 × band 0.25 = 0.5 (must be < 0.5, so band < 0.25 for loops.room)',
    },
    {
      name: 'band not above 0',
      text: yamlWith((c) => {
        c.actuators.heater!.band = 0;
      }),
      expected: 'actuators.heater.band: must be > 0 (got 0)',
    },
    {
      name: 'band under both names (bandC is its deprecated name)',
      text: yamlWith((c) => {
        c.actuators.heater!.band = 0.2;
        c.actuators.heater!.bandC = 0.2;
      }),
      expected:
        'actuators.heater.bandC: both bandC and band are set: bandC is the deprecated name of band; keep only band',
    },
    {
      name: 'unknown modulation',
      text: yamlWith((c) => {
        c.actuators.heater!.modulation = 'pwm';
      }),
      expected: 'actuators.heater.modulation: must be one of "window", "band" (got "pwm")',
    },
    {
      name: 'limits.min not below limits.max',
      text: yamlWith((c) => {
        c.loops.room!.limits = { min: 30, max: 30 };
      }),
      expected: 'loops.room.limits.min: must be less than limits.max',
    },
    {
      name: 'loop without actuators',
      text: yamlWith((c) => {
        delete c.loops.box!.raise;
      }),
      expected: 'loops.box: needs a raise or a lower actuator (or both)',
    },
    {
      name: 'bad loop id',
      text: yamlWith((c) => {
        c.loops.Room = c.loops.room!;
        delete c.loops.room;
      }),
      expected: 'loops.Room: invalid loop id: use lowercase letters, digits and _',
    },
    {
      name: 'bad node id',
      text: yamlWith((c) => {
        c.node = { id: 'My Pi' };
      }),
      expected: 'node.id: use only lowercase letters, digits, _ and - (got "My Pi")',
    },
    {
      name: 'version 2',
      text: yamlWith((c) => {
        c.version = 2;
      }),
      expected: 'version: unsupported version 2: this homeostat reads version 1',
    },
    {
      name: 'missing version',
      text: yamlWith((c) => {
        delete c.version;
      }),
      expected: 'version: required (add "version: 1")',
    },
    {
      name: 'missing required field',
      text: yamlWith((c) => {
        delete c.loops.room!.setpoint;
      }),
      expected: 'loops.room.setpoint: required',
    },
    {
      name: 'wrong type',
      text: yamlWith((c) => {
        c.loops.room!.setpoint = 'twenty';
      }),
      expected: 'loops.room.setpoint: expected a number, got "twenty"',
    },
    {
      name: 'number out of range',
      text: yamlWith((c) => {
        c.loops.room!.controller = { type: 'pid', kp: 0 };
      }),
      expected: 'loops.room.controller.kp: must be > 0 (got 0)',
    },
    {
      name: 'unknown controller type',
      text: yamlWith((c) => {
        c.loops.room!.controller = { type: 'pi', kp: 1 };
      }),
      expected: 'loops.room.controller.type: unknown type "pi" (expected one of "pid", "hysteresis")',
    },
    {
      name: 'unknown sensor kind',
      text: yamlWith((c) => {
        c.sensors.t_box = { kind: 'ds18b21' };
      }),
      // Every registered kind, in registry order (test/kinds/registry.test.ts pins the first five).
      expected: `sensors.t_box.kind: unknown kind "ds18b21" (expected one of ${SENSOR_KINDS.map((k) => `"${k.kind}"`).join(', ')})`,
    },
    {
      name: 'list item path',
      text: yamlWith((c) => {
        c.simulation.plants.room = {
          ambient: 10,
          timeConstantS: 600,
          disturbances: [
            { atS: 60, offset: 1 },
            { atS: -1, offset: 1 },
          ],
        };
      }),
      expected: 'simulation.plants.room.disturbances[1].atS: must be >= 0 (got -1)',
    },
    {
      name: 'no loops',
      text: yamlWith((c) => {
        c.loops = {};
      }),
      expected: 'loops: at least one loop is required',
    },
    {
      name: 'bad YAML syntax (duplicate key)',
      text: 'version: 1\nversion: 1\n',
      expected: '2:1: Map keys must be unique',
    },
    {
      name: 'bad YAML syntax, with the file name',
      text: 'version: 1\nnode: { id: x\n',
      sourceName: 'pi.yaml',
      expected: 'pi.yaml:3:1: Flow map in block collection must be sufficiently indented and end with a }',
    },
    {
      name: 'two YAML documents',
      text: 'version: 1\n---\nversion: 1\n',
      expected: '2:1: the file holds more than one YAML document; remove the extra "---"',
    },
    {
      name: 'empty file',
      text: '',
      sourceName: 'pi.yaml',
      expected: 'pi.yaml: empty config; expected a YAML mapping that starts with "version: 1"',
    },
    {
      name: 'only comments',
      text: '# nothing yet\n',
      expected: '(root): empty config; expected a YAML mapping that starts with "version: 1"',
    },
    {
      name: 'a list instead of a mapping',
      text: '- version: 1\n',
      expected: '(root): expected a mapping, got a list',
    },
  ];

  for (const { name, text, sourceName, expected } of cases) {
    test(`reports ${name}`, () => {
      const result = parseConfigText(text, sourceName);
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.ok(
        result.errors.includes(expected),
        `expected "${expected}" among:\n${result.errors.join('\n')}`,
      );
    });
  }

  test('reports every independent problem at once, not just the first', () => {
    const result = parseConfigText(
      yamlWith((c) => {
        c.loops.room!.setpoint = 35;
        c.loops.box!.limits = { min: 9, max: 1 };
        c.loops.box!.colour = 'red';
      }),
    );
    assert.ok(!result.ok);
    // The allowed keys grow with the schema; the point is one line per problem.
    const withoutAllowed = result.errors.map((e) => e.replace(/ \(allowed: [^)]*\)$/, ' (allowed: …)'));
    assert.deepEqual(withoutAllowed.toSorted(), [
      'loops.box.colour: unknown key (allowed: …)',
      'loops.box.limits.min: must be less than limits.max',
      'loops.room.setpoint: 35 is outside limits 5..30',
    ]);
  });

  test('never throws and answers in single `where: message` lines, whatever the input', () => {
    const garbage = [
      '{',
      '*alias',
      ':',
      '42',
      '"text"',
      '[1, 2',
      'a: &x [*x]',
      '\u0000',
      'version: .nan',
      '? [a]\n: b',
    ];
    for (const text of garbage) {
      const result = parseConfigText(text, 'g.yaml');
      assert.equal(result.ok, false, text);
      assert.ok(!result.ok);
      assert.ok(result.errors.length > 0, text);
      for (const line of result.errors) {
        assert.match(line, /^[^\n]+: [^\n]+$/, `${JSON.stringify(text)} gave ${JSON.stringify(line)}`);
        assert.doesNotMatch(line, /\n|\bat .*\.(js|ts):\d+/);
      }
    }
  });
});

describe('loadConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-config-'));

  test('given config/demo.yaml, then it loads', () => {
    const result = loadConfigFile('config/demo.yaml');
    assert.deepEqual(result.ok ? [] : result.errors, []);
  });

  test('given a missing file, then one error naming it', () => {
    const path = join(dir, 'missing.yaml');
    assert.deepEqual(loadConfigFile(path), { ok: false, errors: [`${path}: config file not found`] });
  });

  test('given a directory, then one error naming it', () => {
    assert.deepEqual(loadConfigFile(dir), {
      ok: false,
      errors: [`${dir}: is a directory, not a config file`],
    });
  });

  test('given a YAML syntax error, then the file name, line and column', () => {
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, 'version: 1\nnode:\n  id: x\n  id: y\n');
    assert.deepEqual(loadConfigFile(path), { ok: false, errors: [`${path}:4:3: Map keys must be unique`] });
  });
});

describe('loadConfigFile refuses what is not a config file, without reading it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-config-'));
  const demo = readFileSync('config/demo.yaml', 'utf8');

  test('given /dev/zero (endless), then one error at once instead of reading gigabytes', () => {
    assert.deepEqual(loadConfigFile('/dev/zero'), {
      ok: false,
      errors: ['/dev/zero: not a regular file (a character device); give the path of a YAML file'],
    });
  });

  test('given a symlink to /dev/zero, then the same refusal (the target is what counts)', () => {
    const link = join(dir, 'zero.yaml');
    symlinkSync('/dev/zero', link);
    assert.match(
      loadConfigFile(link).ok ? '' : (loadConfigFile(link) as { errors: string[] }).errors[0]!,
      /zero\.yaml: not a regular file \(a character device\)/,
    );
  });

  test('given a named pipe nobody writes to, then one error at once (opening it does not block)', () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    assert.deepEqual(loadConfigFile(fifo), {
      ok: false,
      errors: [`${fifo}: not a regular file (a named pipe); give the path of a YAML file`],
    });
  });

  test('given a 58 MB file (over the 128 KiB cap), then one error with its size and the cap', () => {
    const path = join(dir, 'huge.yaml');
    writeFileSync(path, `${demo}\n# ${'x'.repeat(58_000_000)}\n`);
    assert.equal(MAX_CONFIG_BYTES, 131_072);
    const bytes = Buffer.byteLength(demo) + 58_000_004; // "\n# " + x… + "\n"
    assert.deepEqual(loadConfigFile(path), {
      ok: false,
      errors: [
        `${path}: ${bytes} bytes is too large for a config file (limit 131072 bytes = 128 KiB; a real one is a few KB)`,
      ],
    });
  });

  test('given a file exactly at the cap, then it loads', () => {
    const path = join(dir, 'at-cap.yaml');
    const padding = MAX_CONFIG_BYTES - Buffer.byteLength(demo) - 3;
    writeFileSync(path, `${demo}\n#${' '.repeat(padding)}\n`);
    const result = loadConfigFile(path);
    assert.deepEqual(result.ok ? [] : result.errors, []);
  });

  test('given a file one byte over the cap, then it is refused', () => {
    const path = join(dir, 'over-cap.yaml');
    const padding = MAX_CONFIG_BYTES - Buffer.byteLength(demo) - 2;
    writeFileSync(path, `${demo}\n#${' '.repeat(padding)}\n`);
    assert.match((loadConfigFile(path) as { errors: string[] }).errors[0]!, /131073 bytes is too large/);
  });
});

describe('formatPath', () => {
  const cases: [PropertyKey[], string][] = [
    [[], '(root)'],
    [['loops', 'room', 'limits', 'min'], 'loops.room.limits.min'],
    [
      ['simulation', 'plants', 'room', 'disturbances', 0, 'atS'],
      'simulation.plants.room.disturbances[0].atS',
    ],
    [['loops', 'living room'], 'loops["living room"]'],
    [['loops', 'a.b'], 'loops["a.b"]'],
    [[''], '[""]'],
  ];
  for (const [path, expected] of cases) {
    test(`${JSON.stringify(path)} → ${expected}`, () => assert.equal(formatPath(path), expected));
  }
});

describe('loadConfigFileOffThread (reloads: parsing never holds the event loop)', () => {
  test('gives the same result as loadConfigFile, for a good file and a refused one', async () => {
    assert.deepEqual(await loadConfigFileOffThread('config/demo.yaml'), loadConfigFile('config/demo.yaml'));
    assert.deepEqual(await loadConfigFileOffThread('/dev/zero'), loadConfigFile('/dev/zero'));
  });
});
