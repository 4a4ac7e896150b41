/**
 * The command line explains itself: every command answers --help with its options and an
 * example, --version prints the version, an unknown or foreign option is one line naming the
 * command's help (never Node's parser message), and a positional config path works.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { COMMANDS } from '../src/commands/help.js';
import { LATEST_VERSION } from '../src/store/migrations.js';
import { homeostatVersion } from '../src/version.js';
import { runCliHere } from './support/cli.js';

/** `homeostat ARGS…` run in this process (cli.test.ts spawns the real command). */
const cli = (...args: string[]) => runCliHere(args);

describe('homeostat --version', () => {
  test('then the version, exit 0', async () => {
    assert.deepEqual(await cli('--version'), {
      code: 0,
      stdout: `${homeostatVersion()} (database schema ${LATEST_VERSION})\n`,
      stderr: '',
    });
  });
});

describe('homeostat COMMAND --help', () => {
  for (const [name, help] of Object.entries(COMMANDS)) {
    test(`given ${name} --help, then its usage, every option and an example, exit 0`, async () => {
      const { code, stdout } = await cli(name, '--help');
      assert.equal(code, 0);
      assert.match(stdout, new RegExp(`^homeostat ${name} — `));
      assert.ok(stdout.includes(`Usage: ${help.usage}`));
      for (const option of Object.keys(help.options)) assert.ok(stdout.includes(`  ${option}`), option);
      assert.ok(stdout.includes(`Example: ${help.example}`));
    });
  }
});

describe('arguments a command does not take', () => {
  const cases: Array<{ given: string[]; message: string }> = [
    {
      given: ['status', '--bogus'],
      message: 'homeostat status: unknown option --bogus (see homeostat status --help)',
    },
    {
      given: ['validate', '--speed', '5'],
      message: 'homeostat validate: --speed is not an option of validate (see homeostat validate --help)',
    },
    {
      given: ['history', 'room', 'attic'],
      message: 'homeostat history: unexpected argument "attic" (see homeostat history --help)',
    },
    {
      given: ['status', 'room'],
      message: 'homeostat status: unexpected argument "room" (see homeostat status --help)',
    },
    {
      given: ['events', '--since'],
      message: 'homeostat events: --since needs a value (see homeostat events --help)',
    },
    {
      given: ['plot', 'room'],
      message: 'homeostat plot: name a loop and --out FILE.svg, e.g. homeostat plot room --out room.svg',
    },
    {
      given: ['plot', 'room', '--mode', 'heat', '--out', 'x.svg'],
      message: 'homeostat plot: --mode is not an option of plot (see homeostat plot --help)',
    },
    {
      given: ['autotune', 'room', '--csv'],
      message: 'homeostat autotune: --csv is not an option of autotune (see homeostat autotune --help)',
    },
    {
      given: ['tunings', 'room', '--side', 'raise'],
      message: 'homeostat tunings: --side is not an option of tunings (see homeostat tunings --help)',
    },
    {
      given: ['tuning', 'room', '2', '3'],
      message: 'homeostat tuning: unexpected argument "3" (see homeostat tuning --help)',
    },
    {
      given: ['autotune', 'room', 'attic'],
      message: 'homeostat autotune: unexpected argument "attic" (see homeostat autotune --help)',
    },
    { given: ['frobnicate'], message: 'homeostat: unknown command "frobnicate" (see homeostat --help)' },
  ];
  for (const { given, message } of cases) {
    test(`given ${given.join(' ')}, then one line: ${message}, exit 2`, async () => {
      assert.deepEqual(await cli(...given), { code: 2, stdout: '', stderr: `${message}\n` });
    });
  }
});

describe('a positional config path', () => {
  test('given validate config/demo.yaml, then that file is validated', async () => {
    const { code, stdout } = await cli('validate', 'config/demo.yaml');
    assert.equal(code, 0);
    assert.equal(stdout, 'config/demo.yaml: valid (3 loop(s))\n');
  });

  test('given both a positional config and --config, then refused, naming both', async () => {
    const { code, stderr } = await cli('validate', 'config/demo.yaml', '--config', 'other.yaml');
    assert.equal(code, 2);
    assert.equal(
      stderr,
      'homeostat validate: two configs given (config/demo.yaml and --config other.yaml): give one\n',
    );
  });
});

describe('homeostat safe --db', () => {
  test('given --db and no usable config, then the last applied config is looked for beside that database', async () => {
    const { code, stderr } = await cli(
      'safe',
      '--config',
      '/nonexistent/homeostat.yaml',
      '--db',
      '/nonexistent/by-hand/state.db',
      '--sysfs-root',
      '/nonexistent/sys',
    );
    assert.equal(code, 1);
    assert.match(
      stderr,
      /the last applied config \/nonexistent\/by-hand\/state\.db\.safe\.json: not found .*: no pin driven\n$/,
    );
  });
});
