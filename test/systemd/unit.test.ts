/**
 * systemd/homeostat.service as systemd itself reads it: hardened enough (systemd-analyze
 * security), valid (systemd-analyze verify), and without the options that would break the
 * daemon on a Raspberry Pi. Needs systemd-analyze (Debian package `systemd`); never skipped.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultConfigPath } from '../../src/commands/paths.js';
import { NOTIFY_UNAVAILABLE_EXIT_CODE } from '../../src/systemd/notify.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

const unitPath = fileURLToPath(new URL('../../systemd/homeostat.service', import.meta.url));
const unitText = readFileSync(unitPath, 'utf8');
/** Highest acceptable "Overall exposure level" of `systemd-analyze security` (0 best, 10 worst). */
const MAX_EXPOSURE = 2.5;
const INSTALL_HINT = 'systemd-analyze not found: apt-get install -y systemd';
/** The host's unit directory: verify resolves sysinit.target, network.target… from a copy of it. */
const HOST_UNITS = '/usr/lib/systemd/system';

function analyze(args: string[]) {
  const result = spawnSync('systemd-analyze', ['--no-pager', ...args], {
    encoding: 'utf8',
    env: { ...process.env, SYSTEMD_COLORS: '0', SYSTEMD_LOG_COLOR: '0' },
  });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') assert.fail(INSTALL_HINT);
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `Key=value` assignments per key, comments and section headers left out. */
function assignments(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';') || line.startsWith('[')) continue;
    const at = line.indexOf('=');
    const key = line.slice(0, at).trim();
    keys.set(key, [...(keys.get(key) ?? []), line.slice(at + 1).trim()]);
  }
  return keys;
}

/**
 * `systemd-analyze verify` in a throw-away root that holds a copy of the host's units, the
 * unit under test in /etc/systemd/system and executable stubs for the commands it runs: the
 * check then means the same on any machine, whether or not node lives in /usr/bin there.
 * verify exits 0 on unknown keys and unparsable values (it only warns), so any output fails.
 */
function verifyInRoot(
  t: HasAfter,
  text: string,
  executables = ['/usr/bin/node'],
  units: Record<string, string> = { 'homeostat.service': text },
) {
  if (!existsSync(HOST_UNITS)) assert.fail(`${HOST_UNITS} missing: apt-get install -y systemd`);
  const root = tempDir(t, 'homeostat-unit-');
  mkdirSync(join(root, 'usr/lib/systemd'), { recursive: true });
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  // Debian's merged /usr: /bin is /usr/bin.
  symlinkSync('usr/bin', join(root, 'bin'));
  symlinkSync('usr/lib', join(root, 'lib'));
  cpSync(HOST_UNITS, join(root, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
  for (const path of executables) {
    writeFileSync(join(root, path), '#!/bin/sh\n');
    chmodSync(join(root, path), 0o755);
  }
  for (const [name, unit] of Object.entries(units))
    writeFileSync(join(root, 'etc/systemd/system', name), unit);
  return analyze(['verify', '--man=no', `--root=${root}`, ...Object.keys(units)]);
}

describe('systemd/homeostat.service', () => {
  const keys = assignments(unitText);

  const required: Array<[string, string]> = [
    ['Type', 'notify'],
    ['NotifyAccess', 'main'],
    ['ExecStart', '/usr/bin/node /opt/homeostat/dist/cli.js run'],
    // Not /bin/kill: procps is missing on a minimal Debian (203/EXEC); node is there.
    ['ExecReload', '/usr/bin/node /opt/homeostat/dist/cli.js reload --pid $MAINPID'],
    ['WatchdogSec', '60'],
    ['Restart', 'on-failure'],
    ['RestartSec', '5'],
    ['User', 'homeostat'],
    ['Group', 'homeostat'],
    ['SupplementaryGroups', 'gpio'],
    ['StateDirectory', 'homeostat'],
    ['ConfigurationDirectory', 'homeostat'],
    // The install layout (CONTRACT): group homeostat reads the config and the database.
    ['StateDirectoryMode', '0750'],
    ['ConfigurationDirectoryMode', '0750'],
    ['UMask', '0027'],
    ['Environment', 'NODE_ENV=production'],
    // A pin hung in the kernel holds a libuv thread: enough left for the other pins.
    ['Environment', 'UV_THREADPOOL_SIZE=16'],
    // V8 sizes its heap from the machine's memory and collects lazily: capped, RSS tracks the
    // live heap (npm run bench:footprint).
    ['Environment', '"NODE_OPTIONS=--max-semi-space-size=1 --max-old-space-size=96"'],
    ['KillSignal', 'SIGTERM'],
    ['TimeoutStopSec', '30'],
    ['ProtectSystem', 'strict'],
    ['NoNewPrivileges', 'yes'],
  ];
  for (const [key, value] of required) {
    test(`sets ${key}=${value}`, () => assert.ok(keys.get(key)?.includes(value), `${key}: ${keys.get(key)}`));
  }
  test('sets each required key to exactly its required values, nothing more', () => {
    for (const [key] of required) {
      const values = required.filter(([k]) => k === key).map(([, value]) => value);
      assert.deepEqual(keys.get(key), values, key);
    }
  });

  const forbidden: Array<[string, string]> = [
    ['ProtectKernelTunables', 'makes /sys read-only, so sysfs GPIO could not be written'],
    ['MemoryDenyWriteExecute', "breaks V8's JIT"],
    ['PrivateUsers', 'maps the gpio group to nobody'],
  ];
  for (const [key, why] of forbidden) {
    test(`does not set ${key} (${why})`, () => assert.equal(keys.get(key), undefined));
  }

  test('ExecStopPost runs `homeostat safe` on the config ExecStart reads, whatever ended the daemon', () => {
    const stopPost = keys.get('ExecStopPost');
    assert.equal(stopPost?.length, 1, `ExecStopPost=${stopPost?.join(' | ')}`);
    // No "-" prefix: a relay that could not be driven safe must show as a failed unit.
    const [program, cli, command, flag, configPath] = stopPost![0]!.split(/\s+/);
    assert.deepEqual(
      [program, cli, command, flag],
      ['/usr/bin/node', '/opt/homeostat/dist/cli.js', 'safe', '--config'],
    );
    // ExecStart has no --config: it reads $CONFIGURATION_DIRECTORY/config.yaml, set by ConfigurationDirectory=.
    const configDirectory = `/etc/${keys.get('ConfigurationDirectory')?.[0]}`;
    assert.equal(configPath, defaultConfigPath({ CONFIGURATION_DIRECTORY: configDirectory }));
  });

  test(`does not restart after exit ${NOTIFY_UNAVAILABLE_EXIT_CODE} (notify unusable: restarting cannot help)`, () =>
    assert.deepEqual(keys.get('RestartPreventExitStatus'), [String(NOTIFY_UNAVAILABLE_EXIT_CODE)]));

  test('allows AF_UNIX, without which READY/WATCHDOG cannot reach systemd', () => {
    const families = (keys.get('RestrictAddressFamilies') ?? []).join(' ').split(/\s+/);
    assert.ok(families.includes('AF_UNIX'), `RestrictAddressFamilies=${families.join(' ')}`);
  });

  test(`has an overall exposure of at most ${MAX_EXPOSURE} in systemd-analyze security`, () => {
    const result = analyze([
      'security',
      '--offline=true',
      `--threshold=${Math.round(MAX_EXPOSURE * 10)}`,
      unitPath,
    ]);
    const exposure = /Overall exposure level for homeostat\.service: ([0-9.]+)/.exec(result.stdout)?.[1];
    assert.ok(exposure !== undefined, `no exposure level in:\n${result.stdout}${result.stderr}`);
    assert.ok(Number(exposure) <= MAX_EXPOSURE, `exposure ${exposure} > ${MAX_EXPOSURE}`);
    assert.equal(result.status, 0, `--threshold failed:\n${result.stderr}`);
  });

  test('passes systemd-analyze verify without a single warning', (t) => {
    const result = verifyInRoot(t, unitText);
    assert.equal(result.stderr + result.stdout, '');
    assert.equal(result.status, 0);
  });

  test('the verify check fails on a misspelt key (it can catch mistakes)', (t) => {
    const result = verifyInRoot(t, unitText.replace('WatchdogSec=60', 'WatchDogSec=60'));
    assert.match(result.stderr, /Unknown key 'WatchDogSec'/);
  });

  test('the verify check fails on a misspelt ExecStopPost (it checks that key too)', (t) => {
    const result = verifyInRoot(t, unitText.replace('ExecStopPost=', 'ExecStopPosts='));
    assert.match(result.stderr, /Unknown key 'ExecStopPosts'/);
  });

  test('the verify check fails when ExecStart is not executable', (t) => {
    const result = verifyInRoot(t, unitText, []);
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /\/usr\/bin\/node is not executable/);
  });
});

describe('systemd/homeostat-backup.service and .timer', () => {
  const unitText = (name: string) =>
    readFileSync(fileURLToPath(new URL(`../../systemd/${name}`, import.meta.url)), 'utf8');
  const backupUnits = {
    'homeostat-backup.service': unitText('homeostat-backup.service'),
    'homeostat-backup.timer': unitText('homeostat-backup.timer'),
  };

  test('pass systemd-analyze verify without a single warning', (t) => {
    const result = verifyInRoot(t, '', ['/usr/bin/node'], backupUnits);
    assert.equal(result.stderr + result.stdout, '');
    assert.equal(result.status, 0);
  });

  test('the service backs up, as the daemon’s user, the database and config the daemon uses', () => {
    const keys = assignments(backupUnits['homeostat-backup.service']);
    assert.deepEqual(keys.get('User'), ['homeostat']);
    assert.deepEqual(keys.get('ExecStart'), [
      `/usr/bin/node /opt/homeostat/dist/cli.js backup --config ${defaultConfigPath({})} --db /var/lib/homeostat/homeostat.db --dir /var/lib/homeostat/backups --keep 14`,
    ]);
  });

  test('the timer runs nightly and catches up after the Pi was off', () => {
    const keys = assignments(backupUnits['homeostat-backup.timer']);
    assert.deepEqual(keys.get('OnCalendar'), ['*-*-* 03:30']);
    assert.deepEqual(keys.get('Persistent'), ['true']);
  });
});
