/**
 * `homeostat install-service` and `homeostat uninstall-service`: the systemd service from the
 * checkout they run from (the package root above dist/). The steps are in src/install/
 * (install.ts, uninstall.ts); this file gives them the real machine: this node, root or not,
 * systemctl, and doctor through runuser.
 */
import { fileURLToPath } from 'node:url';
import { type InstallOptions, installService } from '../install/install.js';
import { realDoctor, realSystemctl } from '../install/systemctl.js';
import { type UninstallOptions, uninstallService } from '../install/uninstall.js';

/** The package root: dist/commands/ (or src/commands/ under tsx) → ../../ */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const fail = (line: string) => process.stderr.write(`${line}\n`);

export function installServiceCommand(opts: InstallOptions, write: (line: string) => void): Promise<number> {
  return installService(
    opts,
    {
      sourceDir: PACKAGE_ROOT,
      nodePath: process.execPath,
      isRoot: process.getuid?.() === 0,
      systemctl: realSystemctl,
      doctor: realDoctor,
    },
    { write, fail },
  );
}

export function uninstallServiceCommand(
  opts: UninstallOptions,
  write: (line: string) => void,
): Promise<number> {
  return uninstallService(
    opts,
    { isRoot: process.getuid?.() === 0, systemctl: realSystemctl },
    { write, fail },
  );
}
