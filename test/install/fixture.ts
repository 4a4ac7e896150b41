/**
 * What the installer tests install from and into: a root tree holding only the account files
 * shadow's tools edit (etc/passwd, group, shadow, gshadow), and a small checkout whose lock
 * has production, dev, nested, scoped, optional and native packages, so every selection rule
 * shows in the result. The fake systemctl and doctor record what they were asked.
 */
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InstallDeps, Output } from '../../src/install/install.js';
import type { CommandResult } from '../../src/install/systemctl.js';
import { type HasAfter, tempDir, writeTree } from '../support/tmp.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const SHIPPED_UNIT = readFileSync(join(REPO, 'systemd/homeostat.service'), 'utf8');
/** A valid config with simulated hardware only: one loop, nothing the schema may rename soon. */
export const CONFIG_TEXT = `# test/install: one simulated room
version: 1
node:
  id: install-test
storage:
  path: /var/lib/homeostat/homeostat.db
simulation:
  plants:
    room: { kind: thermal, ambient: 10, timeConstantS: 3600, deadTimeS: 120 }
sensors:
  room_temp: { kind: simulated, plant: room, periodS: 5 }
actuators:
  room_heater: { kind: simulated_relay, plant: room, gain: 20, windowS: 300, minOnS: 60, minOffS: 60 }
loops:
  room:
    sensor: room_temp
    raise: room_heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.75, tiS: 960, tdS: 40 }
`;

/** {@link CONFIG_TEXT} in a file of its own, removed after the test file. */
export const DEMO_CONFIG = join(mkdtempSync(join(tmpdir(), 'homeostat-install-config-')), 'config.yaml');
writeFileSync(DEMO_CONFIG, CONFIG_TEXT);
process.on('exit', () => rmSync(dirname(DEMO_CONFIG), { recursive: true, force: true }));

/** A root tree as a fresh Debian has it: root, and the groups a minimal system has (no gpio). */
export function makeRoot(t: HasAfter): string {
  const root = tempDir(t, 'homeostat-root-');
  writeTree(root, {
    'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n',
    'etc/group': 'root:x:0:\ndaemon:x:1:\nusers:x:100:\n',
    'etc/shadow': 'root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n',
    'etc/gshadow': 'root:*::\ndaemon:*::\nusers:*::\n',
  });
  chmodSync(join(root, 'etc/shadow'), 0o640);
  chmodSync(join(root, 'etc/gshadow'), 0o640);
  return root;
}

/** name → { uid, gid, home, shell } from ROOT/etc/passwd (parsed here, not by the code under test). */
export function passwd(root: string): Map<string, { uid: number; gid: number; home: string; shell: string }> {
  const users = new Map<string, { uid: number; gid: number; home: string; shell: string }>();
  for (const line of readFileSync(join(root, 'etc/passwd'), 'utf8').trim().split('\n')) {
    const [name, , uid, gid, , home, shell] = line.split(':');
    users.set(name!, { uid: Number(uid), gid: Number(gid), home: home!, shell: shell! });
  }
  return users;
}

/** name → { gid, members } from ROOT/etc/group. */
export function groups(root: string): Map<string, { gid: number; members: string[] }> {
  const result = new Map<string, { gid: number; members: string[] }>();
  for (const line of readFileSync(join(root, 'etc/group'), 'utf8').trim().split('\n')) {
    const [name, , gid, members] = line.split(':');
    result.set(name!, { gid: Number(gid), members: members ? members.split(',') : [] });
  }
  return result;
}

/** The program files the fake checkout must install: exactly these, nothing else. */
export const EXPECTED_PROGRAM_FILES = [
  'config/demo.yaml',
  'dashboard/index.html',
  'dist/cli.js',
  'dist/commands/run.js',
  'node_modules/@scope/lib/index.js',
  'node_modules/addon/build/Release/addon.node',
  'node_modules/addon/package.json',
  'node_modules/prod/bin/tool',
  'node_modules/prod/index.js',
  'node_modules/prod/main.js', // a symbolic link → index.js
  'node_modules/prod/node_modules/nested/index.js',
  'node_modules/prod/package.json',
  'package-lock.json',
  'package.json',
  'systemd/README.md',
  'systemd/homeostat.service',
];

const LOCK = {
  name: 'homeostat',
  lockfileVersion: 3,
  packages: {
    '': { name: 'homeostat', version: '0.1.0' },
    'node_modules/prod': { version: '1.0.0' },
    'node_modules/prod/node_modules/nested': { version: '2.0.0' },
    'node_modules/prod/node_modules/nested-dev': { version: '2.0.0', dev: true },
    'node_modules/@scope/lib': { version: '1.0.0' },
    'node_modules/devtool': { version: '1.0.0', dev: true },
    'node_modules/other-platform': { version: '1.0.0', optional: true },
    'node_modules/addon': { version: '1.0.0', hasInstallScript: true },
  },
};

/** A checkout after `npm ci` (dist built, node_modules with dev packages too) in a temp dir. */
export function makeSource(t: HasAfter): string {
  const source = tempDir(t, 'homeostat-source-');
  writeTree(source, {
    'dist/cli.js': '#!/usr/bin/env node\nconsole.log("homeostat");\n',
    'dist/commands/run.js': 'export {};\n',
    'dashboard/index.html': '<!doctype html>\n',
    'systemd/README.md': '# systemd\n',
    'config/demo.yaml': CONFIG_TEXT,
    'package.json': '{"name":"homeostat","version":"0.1.0"}\n',
    'package-lock.json': `${JSON.stringify(LOCK, null, 2)}\n`,
    'node_modules/.package-lock.json': '{}\n',
    'node_modules/prod/package.json': '{"name":"prod"}\n',
    'node_modules/prod/index.js': 'module.exports = 1;\n',
    'node_modules/prod/bin/tool': '#!/bin/sh\n',
    'node_modules/prod/node_modules/nested/index.js': 'module.exports = 2;\n',
    'node_modules/prod/node_modules/nested-dev/index.js': 'dev\n',
    'node_modules/@scope/lib/index.js': 'module.exports = 3;\n',
    'node_modules/devtool/index.js': 'dev\n',
    'node_modules/addon/package.json': '{"name":"addon"}\n',
    'node_modules/addon/build/Release/addon.node': 'ELF\n',
    'node_modules/addon/build/Release/obj.target/addon.o': 'object\n',
    'node_modules/addon/build/Release/.deps/addon.o.d': 'deps\n',
  });
  copyFileSync(join(REPO, 'systemd/homeostat.service'), join(source, 'systemd/homeostat.service'));
  chmodSync(join(source, 'node_modules/prod/bin/tool'), 0o755);
  symlinkSync('index.js', join(source, 'node_modules/prod/main.js'));
  mkdirSync(join(source, 'node_modules/.bin'));
  symlinkSync('../prod/bin/tool', join(source, 'node_modules/.bin/tool'));
  return source;
}

/** Every path below `dir` (files and links, not directories), relative, sorted. */
export function listFiles(dir: string, rel = ''): string[] {
  const files: string[] = [];
  for (const name of readdirSync(join(dir, rel))) {
    const path = rel === '' ? name : `${rel}/${name}`;
    if (lstatSync(join(dir, path)).isDirectory()) files.push(...listFiles(dir, path));
    else files.push(path);
  }
  return files.sort();
}

/** path → mtimeMs of everything below `dir` (directories included). */
export function mtimes(dir: string): Map<string, number> {
  const result = new Map<string, number>();
  const visit = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const stats = lstatSync(join(dir, path));
      result.set(path, stats.mtimeMs);
      if (stats.isDirectory()) visit(path);
    }
  };
  visit('');
  return result;
}

/** A systemctl that answers is-active/is-enabled from `state` and records every call. */
export function fakeSystemctl(state: { active: string; enabled: string; fail?: string }) {
  const calls: string[] = [];
  const systemctl = (args: string[]): CommandResult => {
    calls.push(args.join(' '));
    const [verb] = args;
    if (verb === 'is-active')
      return { status: state.active === 'active' ? 0 : 3, stdout: `${state.active}\n`, stderr: '' };
    if (verb === 'is-enabled') {
      return { status: state.enabled === 'enabled' ? 0 : 1, stdout: `${state.enabled}\n`, stderr: '' };
    }
    if (verb === state.fail) return { status: 1, stdout: '', stderr: `Job for homeostat.service failed.\n` };
    if (verb === 'start' || verb === 'restart') state.active = 'active';
    if (verb === 'stop') state.active = 'inactive';
    if (verb === 'enable') state.enabled = 'enabled';
    if (verb === 'disable') state.enabled = 'disabled';
    return { status: 0, stdout: '', stderr: '' };
  };
  return { systemctl, calls };
}

/** The deps an install into a temp root uses: the fake checkout, /usr/bin/node, root, fakes. */
export function testDeps(source: string, overrides: Partial<InstallDeps> = {}): InstallDeps {
  return {
    sourceDir: source,
    nodePath: '/usr/bin/node',
    isRoot: true,
    systemctl: fakeSystemctl({ active: 'inactive', enabled: 'disabled' }).systemctl,
    doctor: () => ({ status: 0, stdout: '✓ config: valid\n', stderr: '' }),
    ...overrides,
  };
}

/** Collects stdout and stderr lines. */
export function capture(): Output & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, write: (line) => lines.push(line), fail: (line) => errors.push(line) };
}
