/**
 * The "next:" lines init prints: typed the way that works where init ran. Before install-service
 * there is no `homeostat` on PATH (the documented first run is `sudo node dist/cli.js init`),
 * and a file written by root is root's 0640, so validate and doctor need sudo then.
 */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { HardwarePlan, SimPlan } from '../../src/init/plan.js';
import {
  formatWritten,
  type InvocationSources,
  invocationOf,
  processInvocationSources,
} from '../../src/init/report.js';
import { tempDir } from '../support/tmp.js';

const CHECKOUT = '/home/pi/homeostat';
const LINKED = '/usr/local/bin/homeostat';

/** A machine where only the files in `executables` are executable. */
function sources(over: { onPath: boolean; root: boolean } & Partial<InvocationSources>): InvocationSources {
  const executables = new Set(over.onPath ? [LINKED] : []);
  return {
    pathEnv: '/usr/local/sbin:/usr/local/bin:/usr/bin:/bin',
    uid: over.root ? 0 : 1000,
    script: `${CHECKOUT}/dist/cli.js`,
    cwd: CHECKOUT,
    isExecutable: (path) => executables.has(path),
    ...over,
  };
}

const hardware: HardwarePlan = {
  kind: 'hardware',
  nodeId: 'raspberrypi',
  loop: 'room',
  setpointC: 20,
  sensor: { address: '28-0316a2795bff', pinned: false },
  relayBcm: 17,
};
const sim: SimPlan = { kind: 'sim', nodeId: 'raspberrypi', loop: 'room', setpointC: 20 };

/** The command words of each "next:" line, without their explanations. */
function commands(lines: string[]): string[] {
  return lines.slice(lines.indexOf('next:') + 1).map((line) => line.trim().split('    ')[0]!);
}

describe('next steps: (homeostat on PATH or not) × (root or not)', () => {
  const table: { onPath: boolean; root: boolean; validate: string; doctor: string; install: string }[] = [
    {
      onPath: true,
      root: false,
      validate: 'homeostat validate /etc/homeostat/config.yaml',
      doctor: 'homeostat doctor /etc/homeostat/config.yaml',
      install: 'sudo homeostat install-service',
    },
    {
      onPath: true,
      root: true,
      validate: 'sudo homeostat validate /etc/homeostat/config.yaml',
      doctor: 'sudo homeostat doctor /etc/homeostat/config.yaml',
      install: 'sudo homeostat install-service',
    },
    {
      onPath: false,
      root: false,
      validate: 'node dist/cli.js validate /etc/homeostat/config.yaml',
      doctor: 'node dist/cli.js doctor /etc/homeostat/config.yaml',
      install: 'sudo node dist/cli.js install-service',
    },
    {
      onPath: false,
      root: true,
      validate: 'sudo node dist/cli.js validate /etc/homeostat/config.yaml',
      doctor: 'sudo node dist/cli.js doctor /etc/homeostat/config.yaml',
      install: 'sudo node dist/cli.js install-service',
    },
  ];
  for (const row of table) {
    test(`given homeostat ${row.onPath ? 'on' : 'not on'} PATH and ${row.root ? 'root' : 'a user'}, then ${row.validate}`, () => {
      const lines = formatWritten('/etc/homeostat/config.yaml', hardware, invocationOf(sources(row)));
      assert.deepEqual(commands(lines), [row.validate, row.doctor, row.install]);
    });
  }

  test('given a simulated room as root before install, then run is typed the same way as validate', () => {
    const lines = formatWritten(
      '/etc/homeostat/config.yaml',
      sim,
      invocationOf(sources({ onPath: false, root: true })),
    );
    assert.deepEqual(commands(lines), [
      'sudo node dist/cli.js validate /etc/homeostat/config.yaml',
      'sudo node dist/cli.js doctor /etc/homeostat/config.yaml',
      'sudo node dist/cli.js run --config /etc/homeostat/config.yaml --speed 60',
      'sudo node dist/cli.js install-service',
    ]);
  });
});

describe('invocationOf', () => {
  const cases: { when: string; given: Partial<InvocationSources>; command: string }[] = [
    {
      when: 'the script is outside the working directory',
      given: { cwd: '/root' },
      command: `node ${CHECKOUT}/dist/cli.js`,
    },
    {
      when: 'its path needs quoting',
      given: { script: '/home/pi/my homeostat/dist/cli.js', cwd: '/tmp' },
      command: `node '/home/pi/my homeostat/dist/cli.js'`,
    },
    {
      when: 'PATH is unset',
      given: { pathEnv: undefined },
      command: 'node dist/cli.js',
    },
    {
      when: 'PATH has an empty entry and homeostat is only in the working directory',
      given: { pathEnv: ':/usr/bin', isExecutable: (path) => path === 'homeostat' },
      command: 'node dist/cli.js',
    },
  ];
  for (const { when, given, command } of cases) {
    test(`given ${when}, then ${command}`, () => {
      assert.equal(invocationOf(sources({ onPath: false, root: false, ...given })).command, command);
    });
  }

  test('by default: a real PATH directory counts only with an executable homeostat in it', (t) => {
    const dir = tempDir(t, 'homeostat-path-');
    const file = join(dir, 'homeostat');
    writeFileSync(file, '#!/bin/sh\n');
    const real = (): InvocationSources => ({
      ...processInvocationSources(),
      pathEnv: `${join(dir, 'missing')}:${dir}`,
      script: `${CHECKOUT}/dist/cli.js`,
      cwd: CHECKOUT,
    });
    chmodSync(file, 0o644);
    assert.equal(invocationOf(real()).command, 'node dist/cli.js', 'not executable');
    chmodSync(file, 0o755);
    assert.equal(invocationOf(real()).command, 'homeostat', 'executable');
  });
});
