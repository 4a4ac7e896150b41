/**
 * `homeostat uninstall-service`: stops and disables the service (its stop drives every
 * actuator safe, and ExecStopPost checks the relays), then removes the unit, the PATH link and
 * the program. The config, the database and the user stay unless `--purge`. Running it again
 * prints "unchanged … (not there)".
 *
 * The program directory goes last: an uninstall run from /opt/homeostat itself has loaded
 * every module it needs by then.
 */
import { resolve } from 'node:path';
import { removeAccounts } from './accounts.js';
import { lstatOrUndefined, removeOwnSymlink, removePath } from './files.js';
import type { InstallDeps, Output } from './install.js';
import {
  CONFIG_DIR,
  DROP_IN_DIR,
  LINK_PATH,
  PROGRAM_CLI,
  PROGRAM_DIR,
  SERVICE_USER,
  STATE_DIR,
  UNIT_NAME,
  UNIT_PATH,
  under,
} from './layout.js';
import { formatStep, type Step } from './steps.js';

export interface UninstallOptions {
  root: string;
  systemctl: boolean;
  /** Also delete the config, the database and user homeostat. */
  purge: boolean;
}

export const NOT_ROOT_UNINSTALL =
  'must run as root (it removes /opt/homeostat and the unit): sudo homeostat uninstall-service';

export async function uninstallService(
  given: UninstallOptions,
  deps: Pick<InstallDeps, 'isRoot' | 'systemctl' | 'live'>,
  out: Output,
): Promise<number> {
  const opts = { ...given, root: resolve(given.root) };
  const live = deps.live ?? opts.root === '/';
  if (!deps.isRoot) {
    out.fail(`homeostat uninstall-service: ${NOT_ROOT_UNINSTALL}`);
    return 1;
  }
  if (opts.root !== '/') out.write(`uninstalling from ${opts.root}`);
  const say = (step: Step) => out.write(formatStep(step));
  const unitFile = under(opts.root, UNIT_PATH);
  try {
    if (!opts.systemctl) out.write('skipped systemctl (--no-systemctl)');
    else if (
      !stopAndDisable(live ? undefined : opts.root, lstatOrUndefined(unitFile) !== undefined, deps, out)
    ) {
      return 1;
    }

    const unit = removePath(unitFile, UNIT_PATH);
    say(unit);
    if (opts.purge) say(removePath(under(opts.root, DROP_IN_DIR), DROP_IN_DIR));
    else if (lstatOrUndefined(under(opts.root, DROP_IN_DIR)) !== undefined) {
      say({ change: 'kept', what: DROP_IN_DIR, detail: 'your local changes; --purge deletes them' });
    }
    if (opts.systemctl && live && unit.change === 'removed') {
      const reload = deps.systemctl(['daemon-reload']);
      if (reload.status !== 0) out.fail(`systemctl daemon-reload failed: ${reload.stderr.trim()}`);
      else out.write('ran systemctl daemon-reload (the unit is gone)');
    }
    say(removeOwnSymlink(under(opts.root, LINK_PATH), LINK_PATH, PROGRAM_CLI));

    if (opts.purge) {
      say(removePath(under(opts.root, CONFIG_DIR), CONFIG_DIR));
      say(removePath(under(opts.root, STATE_DIR), STATE_DIR));
      removeAccounts(opts.root).forEach(say);
    } else {
      out.write(
        `kept ${CONFIG_DIR} (the config), ${STATE_DIR} (the database) and user ${SERVICE_USER}: ` +
          'uninstall-service --purge deletes them',
      );
    }
    say(removePath(under(opts.root, PROGRAM_DIR), PROGRAM_DIR));
    return 0;
  } catch (error) {
    out.fail(`homeostat uninstall-service: ${(error as Error).message}`);
    return 1;
  }
}

/**
 * Stops the service (it drives every actuator safe) and disables it. Below another root
 * (`offlineRoot`) only the offline disable applies.
 */
function stopAndDisable(
  offlineRoot: string | undefined,
  unitFileExists: boolean,
  deps: Pick<InstallDeps, 'systemctl'>,
  out: Output,
): boolean {
  if (offlineRoot !== undefined) {
    const root = offlineRoot;
    if (!unitFileExists) {
      out.write(`unchanged ${UNIT_NAME} (not installed)`);
      return true;
    }
    const result = deps.systemctl([`--root=${root}`, 'disable', UNIT_NAME]);
    if (result.status !== 0) {
      out.fail(
        `homeostat uninstall-service: systemctl --root=${root} disable failed: ${result.stderr.trim()}`,
      );
      return false;
    }
    out.write(`disabled ${UNIT_NAME} in ${root}`);
    return true;
  }
  const active = deps.systemctl(['is-active', UNIT_NAME]).stdout.trim();
  if (active === 'active' || active === 'activating' || active === 'reloading' || active === 'deactivating') {
    const stop = deps.systemctl(['stop', UNIT_NAME]);
    if (stop.status !== 0) {
      out.fail(`homeostat uninstall-service: systemctl stop ${UNIT_NAME} failed: ${stop.stderr.trim()}`);
      out.fail('nothing removed: see systemctl status homeostat');
      return false;
    }
    out.write(`stopped ${UNIT_NAME} (actuators driven to their safe state)`);
  } else {
    out.write(`unchanged ${UNIT_NAME} (not running)`);
  }
  const enabled = deps.systemctl(['is-enabled', UNIT_NAME]).stdout.trim();
  if (enabled === 'enabled' || enabled === 'enabled-runtime') {
    const disable = deps.systemctl(['disable', UNIT_NAME]);
    if (disable.status !== 0) {
      out.fail(`homeostat uninstall-service: systemctl disable failed: ${disable.stderr.trim()}`);
      return false;
    }
    out.write(`disabled ${UNIT_NAME}`);
  } else {
    out.write(`unchanged ${UNIT_NAME} (not enabled)`);
  }
  return true;
}
