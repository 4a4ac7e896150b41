/**
 * The installer's last step on the running system: systemd picks up the unit, the service is
 * enabled and (re)started only when that is needed. Below another root (an image) the unit is
 * only enabled, offline.
 */

import type { Output } from './install.js';
import { UNIT_NAME } from './layout.js';
import type { Systemctl } from './systemctl.js';

/** `--root DIR` with systemctl: enable offline (the wants link in DIR); nothing is started. */
export function enableOffline(root: string, systemctl: Systemctl, out: Output): number {
  const result = systemctl([`--root=${root}`, 'enable', UNIT_NAME]);
  if (result.status !== 0) {
    out.fail(`homeostat install-service: systemctl --root=${root} enable failed: ${result.stderr.trim()}`);
    return 1;
  }
  out.write(`enabled ${UNIT_NAME} in ${root} (not started: --root is not this machine's systemd)`);
  return 0;
}

/**
 * What to do about a failed systemctl: without systemctl, or with systemd installed but not
 * running (a chroot building an image: pi-gen, sdm), install with --no-systemctl (and enable it
 * in the image with --root); otherwise read the service's journal.
 */
function hintFor(result: { status: number | null; stdout: string; stderr: string }): string {
  if (result.status === 127) return 'no systemctl: on a machine without systemd, install with --no-systemctl';
  const said = `${result.stdout}${result.stderr}`;
  if (/has not been booted with systemd|Failed to connect to bus|not been booted/i.test(said)) {
    return 'systemd is not running here (a chroot or an image being built): install with --no-systemctl, and enable the unit in the image with --root DIR';
  }
  return 'see: systemctl status homeostat; journalctl -u homeostat -n 50';
}

/**
 * daemon-reload when the unit changed, enable, then start a stopped service or restart a
 * running one whose program, unit or config changed; an unchanged running service is left alone.
 */
export function startService(
  systemctl: Systemctl,
  what: { unitChanged: boolean; restartWanted: boolean },
  out: Output,
): number {
  const step = (args: string[], done: string): boolean => {
    const result = systemctl(args);
    if (result.status === 0) {
      out.write(done);
      return true;
    }
    out.fail(`homeostat install-service: systemctl ${args.join(' ')} failed (exit ${result.status}):`);
    for (const line of `${result.stdout}${result.stderr}`.trim().split('\n')) out.fail(`  ${line}`);
    out.fail(hintFor(result));
    return false;
  };
  if (what.unitChanged && !step(['daemon-reload'], 'ran systemctl daemon-reload (the unit changed)'))
    return 1;
  const enabled = systemctl(['is-enabled', UNIT_NAME]).stdout.trim();
  if (enabled === 'enabled') out.write(`unchanged ${UNIT_NAME} (enabled)`);
  else if (!step(['enable', UNIT_NAME], `enabled ${UNIT_NAME} (starts at boot)`)) return 1;

  const before = systemctl(['is-active', UNIT_NAME]).stdout.trim();
  const running = before === 'active' || before === 'reloading';
  if (running && !what.restartWanted) out.write(`unchanged ${UNIT_NAME} (running)`);
  else if (running) {
    if (!step(['restart', UNIT_NAME], `restarted ${UNIT_NAME} (program, unit or config changed)`)) return 1;
  } else if (!step(['start', UNIT_NAME], `started ${UNIT_NAME}`)) return 1;

  const state = systemctl(['is-active', UNIT_NAME]).stdout.trim();
  out.write(`${UNIT_NAME}: ${state} (systemctl status homeostat; journalctl -u homeostat -p warning)`);
  return state === 'active' ? 0 : 1;
}
