/**
 * Where an installed homeostat lives (systemd/README.md shows the same table). Every path is
 * absolute inside the installed system; {@link under} places it below the install root (`/` on
 * a Pi, a temp tree in the tests).
 */
import { join } from 'node:path';

export const SERVICE_USER = 'homeostat';
export const SERVICE_GROUP = 'homeostat';
/** Raspberry Pi OS gives this group write access to /sys/class/gpio (its udev rule). */
export const GPIO_GROUP = 'gpio';
export const SERVICE_HOME = '/var/lib/homeostat';
export const SERVICE_SHELL = '/usr/sbin/nologin';

export const PROGRAM_DIR = '/opt/homeostat';
export const PROGRAM_CLI = `${PROGRAM_DIR}/dist/cli.js`;
export const LINK_PATH = '/usr/local/bin/homeostat';
export const CONFIG_DIR = '/etc/homeostat';
export const CONFIG_PATH = `${CONFIG_DIR}/config.yaml`;
/** systemd's StateDirectory=homeostat: the database. */
export const STATE_DIR = SERVICE_HOME;
export const UNIT_NAME = 'homeostat.service';
export const UNIT_PATH = `/etc/systemd/system/${UNIT_NAME}`;
/** `systemctl edit homeostat` writes here; removed only by an uninstall with --purge. */
export const DROP_IN_DIR = `${UNIT_PATH}.d`;
/** The node the unit in systemd/ names; replaced by the installer's own node when that differs. */
export const UNIT_NODE = '/usr/bin/node';

/** What the program directory holds besides the production node_modules (CONTRACT.md). */
export const PROGRAM_ENTRIES = [
  'dist',
  'dashboard',
  'systemd',
  'config',
  'package.json',
  'package-lock.json',
];

/** `path` (absolute in the installed system) below `root`. */
export function under(root: string, path: string): string {
  return root === '/' ? path : join(root, path);
}

/**
 * Directories the service cannot see (`ProtectHome=yes` makes them inaccessible): a node
 * installed there (nvm) makes the unit fail with 203/EXEC.
 */
export const HIDDEN_FROM_SERVICE = ['/home/', '/root/', '/run/user/'];
