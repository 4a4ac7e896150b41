/**
 * The installer end to end, as the docs run it: `node dist/cli.js install-service` from this
 * checkout into a temp root (the real production node_modules, native addon included), then
 * the installed program itself runs and uninstalls. systemctl is the real one in its offline
 * form (`systemctl --root=DIR enable`), which needs no running systemd. Needs root and a
 * current build (`npm run build`; CI's `npm ci` builds it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { DEMO_CONFIG, makeRoot, mtimes, REPO } from './fixture.js';

if (process.getuid?.() !== 0) throw new Error('test/install needs root (chown, useradd --prefix)');

const CLI = join(REPO, 'dist/cli.js');

/** dist/ must hold the installer as src/ has it: a stale build would test old code. */
function assertFreshBuild(): void {
  const pairs: Array<[string, string]> = [
    ['src/commands/install-service.ts', 'dist/commands/install-service.js'],
    ['src/commands/reload.ts', 'dist/commands/reload.js'],
    ...readdirSync(join(REPO, 'src/install')).map((name): [string, string] => [
      `src/install/${name}`,
      `dist/install/${name.replace(/\.ts$/, '.js')}`,
    ]),
  ];
  for (const [source, built] of pairs) {
    assert.ok(existsSync(join(REPO, built)), `${built} missing: run npm run build`);
    assert.ok(
      statSync(join(REPO, built)).mtimeMs >= statSync(join(REPO, source)).mtimeMs,
      `${built} is older than ${source}: run npm run build`,
    );
  }
}

function node(args: string[], options: { user?: string } = {}) {
  const command = options.user ? 'runuser' : process.execPath;
  const argv = options.user ? ['-u', options.user, '--', process.execPath, ...args] : args;
  return spawnSync(command, argv, { encoding: 'utf8', timeout: 120_000, cwd: '/' });
}

const CHANGES = /^(created|updated|removed|kept) /m;

describe('node dist/cli.js install-service --root DIR', () => {
  test('installs a program that runs, changes nothing the second time, and uninstalls itself', (t) => {
    assertFreshBuild();
    const root = makeRoot(t);
    const first = node([CLI, 'install-service', '--root', root, '--no-systemctl', '--config', DEMO_CONFIG]);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^created \/opt\/homeostat \(\d+ files, root-owned\)$/m);
    assert.match(first.stdout, /^created \/etc\/homeostat\/config\.yaml/m);

    const program = join(root, 'opt/homeostat');
    assert.equal(readlinkSync(join(root, 'usr/local/bin/homeostat')), '/opt/homeostat/dist/cli.js');
    assert.equal(lstatSync(join(program, 'dist/cli.js')).mode & 0o777, 0o755);
    // Production packages only, the native addon built, its compiler output left behind.
    for (const absent of ['typescript', 'tsx', '@biomejs', 'playwright-core', '.bin']) {
      assert.equal(
        existsSync(join(program, 'node_modules', absent)),
        false,
        `node_modules/${absent} not installed`,
      );
    }
    assert.ok(existsSync(join(program, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')));
    assert.equal(existsSync(join(program, 'node_modules/better-sqlite3/build/Release/obj.target')), false);

    // The installed copy runs on its own: CLI, config, native addon.
    const version = node([join(program, 'dist/cli.js'), '--version']);
    assert.equal(
      version.stdout.trim(),
      `${JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version} (database schema ${LATEST_VERSION})`,
    );
    const validate = node([
      join(program, 'dist/cli.js'),
      'validate',
      join(root, 'etc/homeostat/config.yaml'),
    ]);
    assert.equal(validate.status, 0, validate.stdout + validate.stderr);
    const sqlite = node([
      '-e',
      `const D = require(${JSON.stringify(join(program, 'node_modules/better-sqlite3'))});` +
        "process.stdout.write(new D(':memory:').prepare('select 41 + 1 as n').get().n.toString())",
    ]);
    assert.equal(sqlite.stdout, '42', sqlite.stderr);

    const before = mtimes(root);
    const second = node([CLI, 'install-service', '--root', root, '--no-systemctl']);
    assert.equal(second.status, 0, second.stderr);
    assert.doesNotMatch(second.stdout, CHANGES);
    assert.deepEqual(mtimes(root), before);

    // Uninstalled by the installed program itself (it deletes its own directory last).
    const gone = node([join(program, 'dist/cli.js'), 'uninstall-service', '--root', root, '--no-systemctl']);
    assert.equal(gone.status, 0, gone.stderr);
    assert.match(gone.stdout, /^removed \/opt\/homeostat$/m);
    assert.equal(existsSync(program), false);
    assert.ok(existsSync(join(root, 'etc/homeostat/config.yaml')), 'the config stays');
  });

  test('with systemctl below a root: enabled offline (the wants link), disabled by uninstall', (t) => {
    assertFreshBuild();
    const root = makeRoot(t);
    const wants = join(root, 'etc/systemd/system/multi-user.target.wants/homeostat.service');
    const install = node([CLI, 'install-service', '--root', root, '--config', DEMO_CONFIG]);
    assert.equal(install.status, 0, install.stderr);
    assert.match(install.stdout, /^enabled homeostat\.service in .* \(not started/m);
    assert.equal(readlinkSync(wants), '/etc/systemd/system/homeostat.service');
    const uninstall = node([CLI, 'uninstall-service', '--root', root, '--purge']);
    assert.equal(uninstall.status, 0, uninstall.stderr);
    assert.equal(existsSync(wants), false);
    assert.equal(existsSync(join(root, 'etc/homeostat')), false);
  });

  test('without a config: exit 1, names homeostat init, installs nothing', (t) => {
    assertFreshBuild();
    const root = makeRoot(t);
    const before = mtimes(root);
    const result = node([CLI, 'install-service', '--root', root, '--no-systemctl']);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /no config: .*`homeostat init`/);
    assert.equal(result.stdout, '');
    assert.deepEqual(mtimes(root), before);
  });

  test('not as root: exit 1, says to use sudo, installs nothing', (t) => {
    assertFreshBuild();
    const root = makeRoot(t);
    const before = mtimes(root);
    const result = node([CLI, 'install-service', '--root', root, '--no-systemctl', '--config', DEMO_CONFIG], {
      user: 'nobody',
    });
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /must run as root .*sudo/);
    assert.deepEqual(mtimes(root), before);
  });
});
