/**
 * `homeostat install-service` into a temp root: every file, owner and mode of the layout
 * (CONTRACT.md), the user and its groups as shadow's tools wrote them into ROOT/etc, a second
 * run that changes nothing, a config that is never overwritten, refusals that change nothing,
 * and what systemctl is asked (a fake that records it). Needs root (chown, useradd --prefix).
 */
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type InstallOptions, installService } from '../../src/install/install.js';
import { CONFIG_PATH, UNIT_PATH } from '../../src/install/layout.js';
import { MTIME_TOLERANCE_MS } from '../../src/install/program.js';
import { type HasAfter, writeTree } from '../support/tmp.js';
import {
  capture,
  DEMO_CONFIG,
  EXPECTED_PROGRAM_FILES,
  fakeSystemctl,
  groups,
  listFiles,
  makeRoot,
  makeSource,
  mtimes,
  passwd,
  SHIPPED_UNIT,
  testDeps,
} from './fixture.js';

if (process.getuid?.() !== 0) throw new Error('test/install needs root (chown, useradd --prefix)');

/** Installs the fake checkout into a fresh root; returns both and what it printed. */
async function freshInstall(t: HasAfter, opts: Partial<InstallOptions> = {}) {
  const root = makeRoot(t);
  const source = makeSource(t);
  const out = capture();
  const code = await installService(
    { root, systemctl: false, configPath: DEMO_CONFIG, ...opts },
    testDeps(source),
    out,
  );
  return { root, source, out, code };
}

async function again(root: string, source: string, opts: Partial<InstallOptions> = {}) {
  const out = capture();
  const code = await installService(
    { root, systemctl: false, configPath: DEMO_CONFIG, ...opts },
    testDeps(source),
    out,
  );
  return { out, code };
}

/** Lines that report a change (a second run must print none). */
const CHANGES = /^(created|updated|removed|kept) /;

describe('install-service into a temp root, --no-systemctl', () => {
  test('creates user homeostat (system, nologin, home /var/lib/homeostat) in group gpio, which it creates', async (t) => {
    const { root, out, code } = await freshInstall(t);
    assert.equal(code, 0, out.errors.join('\n'));
    const user = passwd(root).get('homeostat');
    assert.ok(user, 'no user homeostat in ROOT/etc/passwd');
    assert.equal(user.home, '/var/lib/homeostat');
    assert.equal(user.shell, '/usr/sbin/nologin');
    assert.ok(user.uid > 0 && user.uid < 1000, `uid ${user.uid} is not a system uid`);
    assert.equal(groups(root).get('homeostat')?.gid, user.gid, 'its primary group is group homeostat');
    assert.ok((groups(root).get('gpio')?.gid ?? 1000) < 1000, 'gpio is a system group');
    assert.deepEqual(groups(root).get('gpio')?.members, ['homeostat']);
    assert.ok(
      readFileSync(join(root, 'etc/shadow'), 'utf8').includes('homeostat:!'),
      'the account is locked in ROOT/etc/shadow',
    );
    assert.ok(out.lines.some((line) => line.startsWith('created group gpio (system group')));
    assert.ok(out.lines.some((line) => /^created user homeostat \(system user, .*also in gpio/.test(line)));
  });

  test('puts every file at its place with its owner and mode', async (t) => {
    const { root, out, code } = await freshInstall(t);
    assert.equal(code, 0, out.errors.join('\n'));
    const { uid, gid } = passwd(root).get('homeostat')!;
    const layout: Array<[string, 'dir' | 'file', number, number, number]> = [
      ['opt/homeostat', 'dir', 0o755, 0, 0],
      ['opt/homeostat/dist/cli.js', 'file', 0o755, 0, 0],
      ['opt/homeostat/package.json', 'file', 0o644, 0, 0],
      ['opt/homeostat/node_modules/prod/bin/tool', 'file', 0o755, 0, 0],
      ['opt/homeostat/node_modules/addon/build/Release/addon.node', 'file', 0o644, 0, 0],
      ['etc/homeostat', 'dir', 0o750, 0, gid],
      ['etc/homeostat/config.yaml', 'file', 0o640, 0, gid],
      ['var/lib/homeostat', 'dir', 0o750, uid, gid],
      ['etc/systemd/system/homeostat.service', 'file', 0o644, 0, 0],
    ];
    for (const [path, kind, mode, owner, group] of layout) {
      const stats = lstatSync(join(root, path));
      assert.equal(kind === 'dir' ? stats.isDirectory() : stats.isFile(), true, `${path} is a ${kind}`);
      assert.equal((stats.mode & 0o7777).toString(8), mode.toString(8), `${path} mode`);
      assert.deepEqual([stats.uid, stats.gid], [owner, group], `${path} owner`);
    }
    assert.equal(readlinkSync(join(root, 'usr/local/bin/homeostat')), '/opt/homeostat/dist/cli.js');
    assert.equal(
      readFileSync(join(root, 'etc/homeostat/config.yaml'), 'utf8'),
      readFileSync(DEMO_CONFIG, 'utf8'),
    );
    assert.equal(readFileSync(join(root, 'etc/systemd/system/homeostat.service'), 'utf8'), SHIPPED_UNIT);
  });

  test('copies the production program only: no dev packages, no .bin, no compiler intermediates', async (t) => {
    const { root, source } = await freshInstall(t);
    const program = join(root, 'opt/homeostat');
    assert.deepEqual(listFiles(program), EXPECTED_PROGRAM_FILES);
    for (const path of EXPECTED_PROGRAM_FILES) {
      const stats = lstatSync(join(program, path));
      if (stats.isSymbolicLink()) continue;
      assert.deepEqual(readFileSync(join(program, path)), readFileSync(join(source, path)), path);
      assert.deepEqual([stats.uid, stats.gid], [0, 0], `${path} is root's`);
      // The source's mtime, to the few microseconds utimes keeps (a later run compares it).
      const skewMs = Math.abs(stats.mtimeMs - statSync(join(source, path)).mtimeMs);
      assert.ok(skewMs < MTIME_TOLERANCE_MS, `${path} mtime off by ${skewMs} ms`);
    }
    assert.equal(readlinkSync(join(program, 'node_modules/prod/main.js')), 'index.js', 'a link stays a link');
  });

  test('a second run prints only "unchanged" and changes no file, mode or mtime', async (t) => {
    const { root, source } = await freshInstall(t);
    const before = mtimes(root);
    const { out, code } = await again(root, source);
    assert.equal(code, 0, out.errors.join('\n'));
    assert.deepEqual(
      out.lines.filter((line) => CHANGES.test(line)),
      [],
    );
    for (const what of [
      'group gpio',
      'user homeostat',
      '/opt/homeostat',
      '/usr/local/bin/homeostat',
      CONFIG_PATH,
      UNIT_PATH,
    ]) {
      assert.ok(
        out.lines.some((line) => line.startsWith(`unchanged ${what}`)),
        `unchanged ${what}:\n${out.lines.join('\n')}`,
      );
    }
    assert.deepEqual(mtimes(root), before);
  });

  test('never overwrites the installed config; a different --config is named with how to replace it', async (t) => {
    const { root, source } = await freshInstall(t);
    const other = join(source, 'other.yaml');
    writeFileSync(other, readFileSync(DEMO_CONFIG, 'utf8').replace(/\n/, '\n# edited\n'));
    const { out, code } = await again(root, source, { configPath: other });
    assert.equal(code, 0, out.errors.join('\n'));
    const kept = out.lines.find((line) => line.startsWith(`kept ${CONFIG_PATH}`));
    assert.ok(kept, out.lines.join('\n'));
    assert.match(kept, new RegExp(`sudo install -m 0640 -g homeostat ${other} ${CONFIG_PATH}`));
    assert.equal(
      readFileSync(join(root, 'etc/homeostat/config.yaml'), 'utf8'),
      readFileSync(DEMO_CONFIG, 'utf8'),
    );
  });

  test('an installed config needs no --config, and it is the one validated', async (t) => {
    const { root, source } = await freshInstall(t);
    const { out, code } = await again(root, source, { configPath: undefined });
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(out.lines.includes(`valid ${CONFIG_PATH} (1 loop(s))`), out.lines.join('\n'));
  });

  test('an update copies what changed, deletes what the checkout no longer has, touches nothing else', async (t) => {
    const { root, source } = await freshInstall(t);
    const before = mtimes(root);
    writeFileSync(join(source, 'dist/cli.js'), '#!/usr/bin/env node\nconsole.log("homeostat 2");\n');
    rmSync(join(source, 'dist/commands/run.js'));
    writeTree(source, { 'dist/commands/init.js': 'export {};\n' });
    const { out, code } = await again(root, source);
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(out.lines.includes('updated /opt/homeostat (2 copied, 1 removed)'), out.lines.join('\n'));
    const program = join(root, 'opt/homeostat');
    assert.equal(
      readFileSync(join(program, 'dist/cli.js'), 'utf8'),
      readFileSync(join(source, 'dist/cli.js'), 'utf8'),
    );
    assert.equal(lstatSync(join(program, 'dist/cli.js')).mode & 0o777, 0o755);
    assert.ok(listFiles(program).includes('dist/commands/init.js'));
    assert.ok(!listFiles(program).includes('dist/commands/run.js'));
    const after = mtimes(root);
    for (const path of [
      'opt/homeostat/package.json',
      'opt/homeostat/node_modules/prod/index.js',
      'etc/homeostat/config.yaml',
    ]) {
      assert.equal(after.get(path), before.get(path), `${path} untouched`);
    }
  });

  test('puts a wrong config mode right (a hand-made 0600 file the service could not read)', async (t) => {
    const { root, source } = await freshInstall(t);
    chmodSync(join(root, 'etc/homeostat/config.yaml'), 0o600);
    const { out, code } = await again(root, source);
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(out.lines.includes(`updated ${CONFIG_PATH} (mode 0600 → 0640)`), out.lines.join('\n'));
    assert.equal(lstatSync(join(root, 'etc/homeostat/config.yaml')).mode & 0o777, 0o640);
  });

  test('a config that `homeostat init` wrote before the install (root:root) is given group homeostat', async (t) => {
    const root = makeRoot(t);
    writeTree(root, { 'etc/homeostat/config.yaml': readFileSync(DEMO_CONFIG, 'utf8') });
    chmodSync(join(root, 'etc/homeostat'), 0o750);
    chmodSync(join(root, 'etc/homeostat/config.yaml'), 0o640);
    const out = capture();
    const code = await installService({ root, systemctl: false }, testDeps(makeSource(t)), out);
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(
      out.lines.includes('updated /etc/homeostat (owner 0:0 → root:homeostat)'),
      out.lines.join('\n'),
    );
    assert.ok(
      out.lines.includes(`updated ${CONFIG_PATH} (owner 0:0 → root:homeostat)`),
      out.lines.join('\n'),
    );
    const gid = groups(root).get('homeostat')?.gid;
    assert.equal(lstatSync(join(root, 'etc/homeostat/config.yaml')).gid, gid);
    assert.equal(
      readFileSync(join(root, 'etc/homeostat/config.yaml'), 'utf8'),
      readFileSync(DEMO_CONFIG, 'utf8'),
    );
  });

  test('an existing user keeps its settings and only gains group gpio', async (t) => {
    const root = makeRoot(t);
    writeFileSync(
      join(root, 'etc/passwd'),
      `${readFileSync(join(root, 'etc/passwd'), 'utf8')}homeostat:x:120:130::/nonexistent:/usr/sbin/nologin\n`,
    );
    writeFileSync(
      join(root, 'etc/group'),
      `${readFileSync(join(root, 'etc/group'), 'utf8')}homeostat:x:130:\ngpio:x:997:\n`,
    );
    writeFileSync(
      join(root, 'etc/shadow'),
      `${readFileSync(join(root, 'etc/shadow'), 'utf8')}homeostat:!:19000::::::\n`,
    );
    writeFileSync(
      join(root, 'etc/gshadow'),
      `${readFileSync(join(root, 'etc/gshadow'), 'utf8')}homeostat:!::\ngpio:!::\n`,
    );
    const out = capture();
    const code = await installService(
      { root, systemctl: false, configPath: DEMO_CONFIG },
      testDeps(makeSource(t)),
      out,
    );
    assert.equal(code, 0, out.errors.join('\n'));
    assert.ok(out.lines.includes('unchanged group gpio'));
    assert.ok(out.lines.includes('unchanged user homeostat (uid 120)'));
    assert.ok(out.lines.includes('updated user homeostat (added to group gpio)'));
    assert.deepEqual(groups(root).get('gpio')?.members, ['homeostat']);
    assert.equal(passwd(root).get('homeostat')?.home, '/nonexistent');
    assert.equal(lstatSync(join(root, 'var/lib/homeostat')).uid, 120);
  });

  test('a node elsewhere than /usr/bin/node is the one the unit runs', async (t) => {
    const root = makeRoot(t);
    const out = capture();
    const deps = testDeps(makeSource(t), { nodePath: '/usr/local/bin/node' });
    assert.equal(await installService({ root, systemctl: false, configPath: DEMO_CONFIG }, deps, out), 0);
    const unit = readFileSync(join(root, 'etc/systemd/system/homeostat.service'), 'utf8');
    assert.match(unit, /^ExecStart=\/usr\/local\/bin\/node \/opt\/homeostat\/dist\/cli.js run$/m);
    assert.match(unit, /^ExecReload=\/usr\/local\/bin\/node /m);
    assert.match(unit, /^ExecStopPost=\/usr\/local\/bin\/node /m);
    assert.doesNotMatch(unit, /^Exec.*\/usr\/bin\/node/m);
  });

  test('says that doctor is skipped below another root (its user does not exist here)', async (t) => {
    const { out } = await freshInstall(t);
    assert.ok(
      out.lines.some((line) => line.startsWith('skipped doctor (--root')),
      out.lines.join('\n'),
    );
    assert.ok(out.lines.some((line) => line.startsWith('skipped systemctl (--no-systemctl)')));
  });
});

describe('install-service refuses before changing anything', () => {
  const cases: Array<{
    name: string;
    given: (t: HasAfter, source: string) => { opts?: Partial<InstallOptions>; deps?: object };
    says: RegExp;
  }> = [
    { name: 'not root', given: () => ({ deps: { isRoot: false } }), says: /must run as root/ },
    {
      name: 'no config installed and no --config',
      given: () => ({ opts: { configPath: undefined } }),
      says: /no config: \/etc\/homeostat\/config\.yaml does not exist.*homeostat init/,
    },
    {
      name: 'an invalid --config',
      given: (_t, source) => {
        writeFileSync(join(source, 'bad.yaml'), 'version: 1\nloops: 7\n');
        return { opts: { configPath: join(source, 'bad.yaml') } };
      },
      says: /bad\.yaml is not a valid config/,
    },
    {
      name: 'a node the service cannot see (nvm in /home)',
      given: () => ({ deps: { nodePath: '/home/pi/.nvm/versions/node/v20.0.0/bin/node' } }),
      says: /ProtectHome=yes/,
    },
    {
      name: 'a root without etc/passwd and the other account files',
      given: (_t, source) => {
        const root = join(source, 'empty-root');
        return { opts: { root } };
      },
      says: /--root .*empty-root has no etc\/passwd, etc\/group, etc\/shadow, etc\/gshadow.*sudo cp -p \/etc\/passwd/,
    },
    {
      name: 'a checkout without dist/ (npm ci not run)',
      given: (_t, source) => {
        rmSync(join(source, 'dist'), { recursive: true });
        return {};
      },
      says: /dist is missing: run `npm ci` there/,
    },
    {
      name: 'a production package missing from node_modules',
      given: (_t, source) => {
        rmSync(join(source, 'node_modules/@scope'), { recursive: true });
        return {};
      },
      says: /node_modules\/@scope\/lib is missing: run `npm ci`/,
    },
  ];
  for (const { name, given, says } of cases) {
    test(name, async (t) => {
      const root = makeRoot(t);
      const source = makeSource(t);
      const before = mtimes(root);
      const { opts = {}, deps = {} } = given(t, source);
      const out = capture();
      const code = await installService(
        { root, systemctl: true, configPath: DEMO_CONFIG, ...opts },
        testDeps(source, deps),
        out,
      );
      assert.equal(code, 1);
      assert.match(out.errors.join('\n'), says);
      assert.deepEqual(out.lines, []);
      assert.deepEqual(mtimes(root), before, 'the root tree is as it was');
    });
  }
});

describe('install-service and systemctl (a fake that records the calls)', () => {
  const S = 'homeostat.service';

  test('--root DIR: only the offline enable, nothing started, no doctor', async (t) => {
    const root = makeRoot(t);
    const fake = fakeSystemctl({ active: 'inactive', enabled: 'disabled' });
    let doctorRuns = 0;
    const deps = testDeps(makeSource(t), {
      systemctl: fake.systemctl,
      doctor: () => {
        doctorRuns += 1;
        return { status: 0, stdout: '', stderr: '' };
      },
    });
    const out = capture();
    assert.equal(await installService({ root, systemctl: true, configPath: DEMO_CONFIG }, deps, out), 0);
    assert.deepEqual(fake.calls, [`--root=${root} enable ${S}`]);
    assert.equal(doctorRuns, 0);
  });

  // On the running system (live: what root "/" means), into a temp root so files stay apart.
  const table: Array<{
    name: string;
    state: { active: string; enabled: string; fail?: string };
    /** Installed once before (files only), then this changed in the checkout. */
    change?: (source: string) => void;
    calls: string[];
    code: number;
  }> = [
    {
      name: 'fresh install: daemon-reload, enable, start',
      state: { active: 'inactive', enabled: 'disabled' },
      calls: [
        'daemon-reload',
        `is-enabled ${S}`,
        `enable ${S}`,
        `is-active ${S}`,
        `start ${S}`,
        `is-active ${S}`,
      ],
      code: 0,
    },
    {
      name: 'nothing changed and it runs: left alone',
      state: { active: 'active', enabled: 'enabled' },
      change: () => {},
      calls: [`is-enabled ${S}`, `is-active ${S}`, `is-active ${S}`],
      code: 0,
    },
    {
      name: 'nothing changed and it had failed: started',
      state: { active: 'failed', enabled: 'enabled' },
      change: () => {},
      calls: [`is-enabled ${S}`, `is-active ${S}`, `start ${S}`, `is-active ${S}`],
      code: 0,
    },
    {
      name: 'the program changed and it runs: restarted',
      state: { active: 'active', enabled: 'enabled' },
      change: (source) => writeFileSync(join(source, 'dist/cli.js'), '#!/usr/bin/env node\n// 2\n'),
      calls: [`is-enabled ${S}`, `is-active ${S}`, `restart ${S}`, `is-active ${S}`],
      code: 0,
    },
    {
      name: 'the unit changed: daemon-reload, restart',
      state: { active: 'active', enabled: 'enabled' },
      change: (source) =>
        writeFileSync(
          join(source, 'systemd/homeostat.service'),
          SHIPPED_UNIT.replace('RestartSec=5', 'RestartSec=6'),
        ),
      calls: ['daemon-reload', `is-enabled ${S}`, `is-active ${S}`, `restart ${S}`, `is-active ${S}`],
      code: 0,
    },
    {
      name: 'the start fails: exit 1, pointing to the journal',
      state: { active: 'inactive', enabled: 'disabled', fail: 'start' },
      calls: ['daemon-reload', `is-enabled ${S}`, `enable ${S}`, `is-active ${S}`, `start ${S}`],
      code: 1,
    },
  ];
  for (const { name, state, change, calls, code } of table) {
    test(name, async (t) => {
      const root = makeRoot(t);
      const source = makeSource(t);
      if (change) {
        const first = await installService(
          { root, systemctl: false, configPath: DEMO_CONFIG },
          testDeps(source),
          capture(),
        );
        assert.equal(first, 0);
        change(source);
      }
      const fake = fakeSystemctl(state);
      const out = capture();
      const result = await installService(
        { root, systemctl: true, configPath: DEMO_CONFIG },
        testDeps(source, { systemctl: fake.systemctl, live: true }),
        out,
      );
      assert.equal(result, code, `${out.lines.join('\n')}\n${out.errors.join('\n')}`);
      assert.deepEqual(fake.calls, calls);
      if (code === 1) assert.match(out.errors.join('\n'), /journalctl -u homeostat/);
      else assert.match(out.lines.at(-1)!, /^homeostat\.service: active /);
    });
  }

  test('on the running system doctor runs, and its failure is shown but does not stop the install', async (t) => {
    const root = makeRoot(t);
    const fake = fakeSystemctl({ active: 'inactive', enabled: 'disabled' });
    const asked: string[] = [];
    const doctor = (nodePath: string) => {
      asked.push(nodePath);
      return {
        status: 1,
        stdout: '✗ GPIO: no gpiochip in /sys/class/gpio\n  fix: enable GPIO\n',
        stderr: '',
      };
    };
    const out = capture();
    const deps = testDeps(makeSource(t), { systemctl: fake.systemctl, live: true, doctor });
    assert.equal(await installService({ root, systemctl: true, configPath: DEMO_CONFIG }, deps, out), 0);
    assert.deepEqual(asked, ['/usr/bin/node']);
    const at = out.lines.indexOf('doctor, as user homeostat:');
    assert.deepEqual(out.lines.slice(at + 1, at + 3), [
      '  ✗ GPIO: no gpiochip in /sys/class/gpio',
      '    fix: enable GPIO',
    ]);
    assert.match(out.lines[at + 3]!, /^doctor: problems found \(exit 1, above\).*Continuing\.$/);
    assert.ok(fake.calls.includes(`start ${S}`), 'started anyway');
    assert.ok(
      out.lines.indexOf('doctor, as user homeostat:') < out.lines.findIndex((l) => l.startsWith('started')),
      'doctor runs before the start',
    );
  });
});
