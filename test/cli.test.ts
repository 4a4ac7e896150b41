import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { defaultConfigPath, defaultDbPath } from '../src/commands/paths.js';
import type { ActuatorDriver, SensorDriver } from '../src/drivers/types.js';
import { speedProblem } from '../src/kinds/build.js';
import { LATEST_VERSION } from '../src/store/migrations.js';
import { homeostatVersion } from '../src/version.js';
import { type HasAfter, tempDir, tempTree } from './support/tmp.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

function cli(...args: string[]) {
  return spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
}

/** A file `name` holding `text` in a new directory removed after the test. */
function tempFile(t: HasAfter, name: string, text: string): string {
  return join(tempTree(t, { [name]: text }, 'homeostat-cli-'), name);
}

/** `homeostat run` on the demo at --speed 60 with JSON logs; `output` collects stdout and stderr. */
function runDemo(t: HasAfter, nodeArgs: string[] = []) {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...CLI,
      'run',
      '--config',
      'config/demo.yaml',
      '--db',
      join(tempDir(t, 'homeostat-run-'), 'state.db'),
      '--speed',
      '60',
      '--log-format',
      'json',
      '--http-port',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const demo = { child, output: '' };
  child.stdout.on('data', (chunk) => {
    demo.output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    demo.output += chunk;
  });
  return demo;
}

describe('homeostat validate', () => {
  test('the demo config is valid: exit 0', () => {
    const result = cli('validate', '--config', 'config/demo.yaml');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /valid \(3 loop\(s\)\)/);
  });

  test('a broken config: exit 1, one "path: message" line per problem, no stack trace', (t) => {
    const path = tempFile(
      t,
      'bad.yaml',
      [
        'version: 1',
        'node: { id: t }',
        'sensors: { t1: { kind: simulated, plant: p } }',
        'simulation: { plants: { p: { ambient: 10, timeConstantS: 60 } } }',
        'actuators: { h: { kind: simulated_relay, plant: p, gain: 10 } }',
        'loops:',
        '  room: { sensor: nope, raise: h, setpoint: 40, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 1 } }',
      ].join('\n'),
    );
    const result = cli('validate', '--config', path);
    assert.equal(result.status, 1);
    const lines = result.stdout.trim().split('\n');
    assert.ok(lines.length >= 2, result.stdout);
    for (const line of lines) assert.match(line, /^[\w.[\]"()-]+: .+/);
    assert.ok(
      lines.some((l) => l.startsWith('loops.room.sensor: ')),
      result.stdout,
    );
    assert.ok(
      lines.some((l) => l.startsWith('loops.room.setpoint: ')),
      result.stdout,
    );
    assert.doesNotMatch(result.stdout + result.stderr, /\n\s+at /);
  });

  test('a missing file: exit 1 with one line', () => {
    const result = cli('validate', '--config', '/nonexistent/homeostat.yaml');
    assert.equal(result.status, 1);
    assert.equal(result.stdout.trim().split('\n').length, 1);
  });

  test('--version and --help through the real entry point: on stdout, exit 0 (cli-help.test.ts runs the rest in-process)', () => {
    const version = cli('--version');
    assert.equal(version.status, 0);
    assert.equal(version.stdout, `${homeostatVersion()} (database schema ${LATEST_VERSION})\n`);
    const help = cli('set', '--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^homeostat set — /);
  });

  test('usage errors exit 2', () => {
    assert.equal(cli('frobnicate').status, 2);
    assert.equal(cli('run', '--speed', 'fast', '--config', 'config/demo.yaml').status, 2);
  });
});

/** Resolves when the demo has switched a relay on (it is regulating); rejects after 20 s. */
function firstSwitchOn(demo: ReturnType<typeof runDemo>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no cycle within 20 s:\n${demo.output}`)), 20_000);
    demo.child.stdout.on('data', () => {
      if (demo.output.includes('→ ON')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

describe('homeostat run', () => {
  test('given the demo at --speed 60, when SIGTERM arrives, then actuators go to their safe state and it exits 0', async (t) => {
    const demo = runDemo(t);
    const { child } = demo;
    await firstSwitchOn(demo);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const { output } = demo;
    assert.equal(code, 0, output);
    const lines = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    for (const actuator of ['room_heater', 'chamber_heater', 'chamber_cooler']) {
      assert.ok(
        lines.some((l) => l.msg === `${actuator} → safe state (SIGTERM)`),
        `${actuator} driven safe:\n${output}`,
      );
    }
  });
});

describe('homeostat run: a defect that escapes every handler', () => {
  test('given the demo running, when an exception is thrown outside any handler, then the actuators are driven safe and it exits 1', async (t) => {
    // A preloaded module throws from a macrotask of its own (a stand-in for any defect) when the
    // test asks, by SIGUSR2, once the daemon is regulating: never before it is up, however slow
    // the machine.
    const preload = tempFile(
      t,
      'throw-on-signal.mjs',
      "process.on('SIGUSR2', () => setImmediate(() => { throw new Error('injected defect'); }));\n",
    );
    const demo = runDemo(t, ['--import', preload]);
    await firstSwitchOn(demo);
    demo.child.kill('SIGUSR2');
    const code = await new Promise<number | null>((resolve) => demo.child.on('exit', resolve));
    const { output } = demo;
    assert.equal(code, 1, output);
    const lines = output
      .trim()
      .split('\n')
      .flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as { msg: string }] : []));
    assert.ok(
      lines.some((l) => /uncaught exception/.test(l.msg)),
      output,
    );
    for (const actuator of ['room_heater', 'chamber_heater', 'chamber_cooler', 'fogger']) {
      assert.ok(
        lines.some((l) => l.msg === `${actuator} → safe state (uncaught exception)`),
        `${actuator} driven safe:\n${output}`,
      );
    }
  });
});

describe('--speed is only for simulated drivers', () => {
  const fake = (id: string, simulated: boolean) => ({ id, simulated }) as SensorDriver & ActuatorDriver;
  test('all simulated: allowed', () => {
    assert.equal(
      speedProblem({
        sensors: new Map([['t', fake('t', true)]]),
        actuators: new Map([['h', fake('h', true)]]),
      }),
      undefined,
    );
  });
  test('a real driver: refused, naming it', () => {
    const problem = speedProblem({
      sensors: new Map([['probe', fake('probe', false)]]),
      actuators: new Map([['h', fake('h', true)]]),
    });
    assert.equal(problem, '--speed needs every driver to be simulated; real drivers: probe');
  });
});

describe('default paths (contract)', () => {
  test('systemd directories win, else /etc and ./var', () => {
    assert.equal(defaultConfigPath({}), '/etc/homeostat/config.yaml');
    assert.equal(
      defaultConfigPath({ CONFIGURATION_DIRECTORY: '/etc/homeostat2' }),
      '/etc/homeostat2/config.yaml',
    );
    assert.equal(defaultDbPath({}), './var/homeostat.db');
    assert.equal(defaultDbPath({ STATE_DIRECTORY: '/var/lib/homeostat' }), '/var/lib/homeostat/homeostat.db');
  });
});
