/**
 * `homeostat uninstall-service` from a temp root: the unit, the program and the link go; the
 * config, the database and the user stay unless --purge; a second run changes nothing; the
 * service is stopped before anything is removed. Needs root (chown, userdel --prefix).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { installService } from '../../src/install/install.js';
import { type UninstallOptions, uninstallService } from '../../src/install/uninstall.js';
import type { HasAfter } from '../support/tmp.js';
import {
  capture,
  DEMO_CONFIG,
  fakeSystemctl,
  groups,
  listFiles,
  makeRoot,
  makeSource,
  mtimes,
  passwd,
  testDeps,
} from './fixture.js';

if (process.getuid?.() !== 0) throw new Error('test/install needs root (chown, userdel --prefix)');

/** An installed root with a database in the state directory. */
async function installed(t: HasAfter): Promise<string> {
  const root = makeRoot(t);
  const out = capture();
  const code = await installService(
    { root, systemctl: false, configPath: DEMO_CONFIG },
    testDeps(makeSource(t)),
    out,
  );
  assert.equal(code, 0, out.errors.join('\n'));
  writeFileSync(join(root, 'var/lib/homeostat/homeostat.db'), 'SQLite format 3\0');
  return root;
}

async function uninstall(root: string, opts: Partial<UninstallOptions> = {}, deps = {}) {
  const out = capture();
  const code = await uninstallService(
    { root, systemctl: false, purge: false, ...opts },
    {
      isRoot: true,
      systemctl: fakeSystemctl({ active: 'inactive', enabled: 'disabled' }).systemctl,
      ...deps,
    },
    out,
  );
  return { code, out };
}

const CHANGES = /^(created|updated|removed) /;

describe('uninstall-service from a temp root, --no-systemctl', () => {
  test('removes the unit, the program and the link; keeps the config, the database and the user', async (t) => {
    const root = await installed(t);
    const { code, out } = await uninstall(root);
    assert.equal(code, 0, out.errors.join('\n'));
    for (const gone of ['etc/systemd/system/homeostat.service', 'opt/homeostat', 'usr/local/bin/homeostat']) {
      assert.equal(existsSync(join(root, gone)), false, `${gone} removed`);
    }
    assert.equal(
      readFileSync(join(root, 'etc/homeostat/config.yaml'), 'utf8'),
      readFileSync(DEMO_CONFIG, 'utf8'),
    );
    assert.ok(existsSync(join(root, 'var/lib/homeostat/homeostat.db')), 'the database stays');
    assert.ok(passwd(root).has('homeostat'), 'the user stays');
    assert.ok(
      out.lines.some((line) => /^kept \/etc\/homeostat .*--purge deletes them$/.test(line)),
      out.lines.join('\n'),
    );
  });

  test('a second run prints no change and changes nothing', async (t) => {
    const root = await installed(t);
    await uninstall(root);
    const before = mtimes(root);
    const { code, out } = await uninstall(root);
    assert.equal(code, 0);
    assert.deepEqual(
      out.lines.filter((line) => CHANGES.test(line)),
      [],
    );
    assert.ok(out.lines.includes('unchanged /opt/homeostat (not there)'), out.lines.join('\n'));
    assert.deepEqual(mtimes(root), before);
  });

  test('install after uninstall finds the kept config and user, and needs no --config', async (t) => {
    const root = await installed(t);
    await uninstall(root);
    const out = capture();
    const code = await installService({ root, systemctl: false }, testDeps(makeSource(t)), out);
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(
      out.lines.some((line) => /^unchanged user homeostat \(uid \d+\)$/.test(line)),
      out.lines.join('\n'),
    );
    assert.ok(out.lines.some((line) => line.startsWith('created /opt/homeostat')));
  });

  test('--purge also deletes the config, the database, the user and its group; gpio stays', async (t) => {
    const root = await installed(t);
    const { code, out } = await uninstall(root, { purge: true });
    assert.equal(code, 0, out.errors.join('\n'));
    assert.equal(existsSync(join(root, 'etc/homeostat')), false);
    assert.equal(existsSync(join(root, 'var/lib/homeostat')), false);
    assert.equal(passwd(root).has('homeostat'), false);
    assert.equal(groups(root).has('homeostat'), false);
    assert.deepEqual(groups(root).get('gpio')?.members, []);
    assert.equal(readFileSync(join(root, 'etc/shadow'), 'utf8').includes('homeostat'), false);
    // Only the account files (and shadow's backups of them) and empty directories are left.
    assert.deepEqual(
      listFiles(root).filter((path) => !path.endsWith('-')),
      ['etc/group', 'etc/gshadow', 'etc/passwd', 'etc/shadow'],
    );
    const again = await uninstall(root, { purge: true });
    assert.equal(again.code, 0);
    assert.deepEqual(
      again.out.lines.filter((line) => CHANGES.test(line)),
      [],
    );
  });

  test('keeps a drop-in (local changes) unless --purge', async (t) => {
    const root = await installed(t);
    mkdirSync(join(root, 'etc/systemd/system/homeostat.service.d'));
    writeFileSync(join(root, 'etc/systemd/system/homeostat.service.d/override.conf'), '[Service]\n');
    const { out } = await uninstall(root);
    assert.ok(out.lines.some((line) => line.startsWith('kept /etc/systemd/system/homeostat.service.d')));
    assert.ok(existsSync(join(root, 'etc/systemd/system/homeostat.service.d/override.conf')));
    await uninstall(root, { purge: true });
    assert.equal(existsSync(join(root, 'etc/systemd/system/homeostat.service.d')), false);
  });

  test('leaves /usr/local/bin/homeostat alone when it is not our link', async (t) => {
    const root = await installed(t);
    rmSync(join(root, 'usr/local/bin/homeostat'));
    symlinkSync('/usr/lib/node_modules/homeostat/dist/cli.js', join(root, 'usr/local/bin/homeostat'));
    const { out } = await uninstall(root);
    assert.ok(out.lines.some((line) => line.startsWith('kept /usr/local/bin/homeostat (not a link to')));
    assert.ok(existsSync(join(root, 'usr/local/bin')));
  });

  test('refuses when not root, removing nothing', async (t) => {
    const root = await installed(t);
    const before = mtimes(root);
    const { code, out } = await uninstall(root, {}, { isRoot: false });
    assert.equal(code, 1);
    assert.match(out.errors.join('\n'), /must run as root/);
    assert.deepEqual(mtimes(root), before);
  });
});

describe('uninstall-service and systemctl (a fake that records the calls)', () => {
  const S = 'homeostat.service';
  const table: Array<{
    name: string;
    state: { active: string; enabled: string; fail?: string };
    calls: string[];
  }> = [
    {
      name: 'running and enabled: stop, disable, then daemon-reload once the unit is gone',
      state: { active: 'active', enabled: 'enabled' },
      calls: [`is-active ${S}`, `stop ${S}`, `is-enabled ${S}`, `disable ${S}`, 'daemon-reload'],
    },
    {
      name: 'stopped and disabled: only the daemon-reload',
      state: { active: 'inactive', enabled: 'disabled' },
      calls: [`is-active ${S}`, `is-enabled ${S}`, 'daemon-reload'],
    },
  ];
  for (const { name, state, calls } of table) {
    test(name, async (t) => {
      const root = await installed(t);
      const fake = fakeSystemctl(state);
      const { code, out } = await uninstall(
        root,
        { systemctl: true },
        { systemctl: fake.systemctl, live: true },
      );
      assert.equal(code, 0, out.errors.join('\n'));
      assert.deepEqual(fake.calls, calls);
    });
  }

  test('a stop that fails removes nothing', async (t) => {
    const root = await installed(t);
    const before = mtimes(root);
    const fake = fakeSystemctl({ active: 'active', enabled: 'enabled', fail: 'stop' });
    const { code, out } = await uninstall(
      root,
      { systemctl: true },
      { systemctl: fake.systemctl, live: true },
    );
    assert.equal(code, 1);
    assert.match(out.errors.join('\n'), /nothing removed/);
    assert.deepEqual(mtimes(root), before);
  });

  test('--root DIR: the offline disable only', async (t) => {
    const root = await installed(t);
    const fake = fakeSystemctl({ active: 'active', enabled: 'enabled' });
    const { code } = await uninstall(root, { systemctl: true }, { systemctl: fake.systemctl });
    assert.equal(code, 0);
    assert.deepEqual(fake.calls, [`--root=${root} disable ${S}`]);
  });
});
