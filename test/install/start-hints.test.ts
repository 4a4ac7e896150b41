/**
 * What install-service says when systemctl fails, by what systemctl said: no systemctl at all,
 * systemd installed but not running (a chroot building an image, as pi-gen and sdm do: systemctl
 * prints "System has not been booted with systemd as init system (PID 1). Can't operate."), or a
 * service that would not start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startService } from '../../src/install/start.js';

const cases: Array<[given: string, answer: { status: number; stderr: string }, hint: RegExp]> = [
  [
    'no systemctl',
    { status: 127, stderr: 'systemctl not found' },
    /^no systemctl: .*install with --no-systemctl$/,
  ],
  [
    'systemd not running (a chroot)',
    {
      status: 1,
      stderr:
        "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n",
    },
    /^systemd is not running here \(a chroot or an image being built\): install with --no-systemctl, and enable the unit in the image with --root DIR$/,
  ],
  [
    'a unit systemd refuses',
    { status: 1, stderr: 'Unit homeostat.service has a bad setting.' },
    /^see: systemctl status homeostat; journalctl/,
  ],
];

for (const [given, answer, hint] of cases) {
  test(`given ${given}, the last line says what to do`, () => {
    const failed: string[] = [];
    const code = startService(
      () => ({ status: answer.status, stdout: '', stderr: answer.stderr }),
      { unitChanged: true, restartWanted: false },
      { write: () => {}, fail: (line) => failed.push(line) },
    );
    assert.equal(code, 1);
    assert.match(
      failed[0] ?? '',
      /^homeostat install-service: systemctl daemon-reload failed \(exit \d+\):$/,
    );
    assert.match(failed.at(-1) ?? '', hint);
  });
}
