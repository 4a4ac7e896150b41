/**
 * `homeostat install-service`, step by step. Everything that can refuse (not root, a node the
 * service cannot see, a missing build, no config or an invalid one) is checked before the
 * first change; then each step compares and changes only what differs, printing one line, so
 * a second run prints only "unchanged" and restarts nothing.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfigFile } from '../config/load.js';
import { ensureAccounts, serviceIds } from './accounts.js';
import {
  ensureDir,
  ensureFile,
  ensureSymlink,
  fixAttributes,
  lstatOrUndefined,
  type Owner,
  ROOT_OWNER,
  writeAtomic,
} from './files.js';
import {
  CONFIG_DIR,
  CONFIG_PATH,
  LINK_PATH,
  PROGRAM_CLI,
  PROGRAM_DIR,
  SERVICE_GROUP,
  SERVICE_USER,
  STATE_DIR,
  UNIT_NAME,
  UNIT_PATH,
  under,
} from './layout.js';
import { type Manifest, programManifest, syncProgram } from './program.js';
import { enableOffline, startService } from './start.js';
import { changedAny, formatStep, type Step } from './steps.js';
import type { CommandResult, Systemctl } from './systemctl.js';
import { nodeProblem, unitText } from './unit.js';

export interface InstallOptions {
  /** `/`, or the tree to install into (tests, images). */
  root: string;
  /** false: change files only (no systemctl at all). */
  systemctl: boolean;
  /** Installed as /etc/homeostat/config.yaml when there is none. */
  configPath?: string;
}

/** What the installer runs on and with; the command passes the real ones, tests their own. */
export interface InstallDeps {
  /** The checkout whose program is installed (holds dist/, node_modules/, package-lock.json). */
  sourceDir: string;
  /** The node the unit will run (the one running the installer). */
  nodePath: string;
  isRoot: boolean;
  systemctl: Systemctl;
  /** Runs doctor as the service user (on the running system only). */
  doctor: (nodePath: string) => CommandResult;
  /**
   * The root is the running system: doctor runs as the service user, systemctl starts the
   * service. Default: root is `/`. Tests set it to drive their fakes below a temp root.
   */
  live?: boolean;
}

export interface Output {
  write: (line: string) => void;
  /** Refusals and failures (stderr). */
  fail: (line: string) => void;
}

export const NOT_ROOT =
  'must run as root (it creates a system user and writes /etc, /opt and /usr/local/bin): sudo node dist/cli.js install-service';

/** What the checks found, when nothing stands in the way. */
interface Ready {
  opts: InstallOptions;
  /** undefined: the installer runs from the program directory itself (nothing to copy). */
  manifest: Manifest | undefined;
  config: { path: string; loops: number; warnings: string[] };
}

/** Why the install does not start, and the lines that explain it (a config's own errors). */
interface Refused {
  reason: string;
  details: string[];
}

/**
 * Everything that can refuse, before the first change: root, a node the service can see, a
 * usable --root, a built checkout, a config (the installed one, else --config) that validates.
 * Returns why not, or what the install needs.
 */
function checkFirst(given: InstallOptions, deps: InstallDeps): Ready | Refused {
  const refuse = (reason: string): Refused => ({ reason, details: [] });
  if (!deps.isRoot) return refuse(NOT_ROOT);
  const problem = nodeProblem(deps.nodePath) ?? rootProblem(given.root);
  if (problem) return refuse(problem);
  // useradd --prefix and systemctl --root want an absolute path.
  const opts = { ...given, root: resolve(given.root) };

  let manifest: Manifest | undefined;
  if (!samePath(deps.sourceDir, under(opts.root, PROGRAM_DIR))) {
    try {
      manifest = programManifest(deps.sourceDir);
    } catch (error) {
      return refuse(`${(error as Error).message}. Nothing was installed.`);
    }
  }

  const installedConfig = under(opts.root, CONFIG_PATH);
  const configExists = lstatOrUndefined(installedConfig) !== undefined;
  if (!configExists && opts.configPath === undefined) {
    return refuse(
      `no config: ${CONFIG_PATH} does not exist and no --config FILE was given. ` +
        'Write one with `homeostat init`, from the checkout `sudo node dist/cli.js init` (it lists the ' +
        'sensors and pins found), or pass --config FILE (examples in config/). Nothing was installed.',
    );
  }
  // The file the service will read: the installed one when there is one (never replaced).
  const checked = configExists ? installedConfig : opts.configPath!;
  const validation = loadConfigFile(checked);
  if (!validation.ok) {
    return {
      reason: `${checked} is not a valid config (above): fix it, then install again. Nothing was installed.`,
      details: validation.errors,
    };
  }
  const loops = Object.keys(validation.config.loops).length;
  return { opts, manifest, config: { path: checked, loops, warnings: validation.warnings } };
}

export async function installService(given: InstallOptions, deps: InstallDeps, out: Output): Promise<number> {
  const ready = checkFirst(given, deps);
  if ('reason' in ready) {
    for (const line of ready.details) out.fail(line);
    out.fail(`homeostat install-service: ${ready.reason}`);
    return 1;
  }
  if (ready.opts.root !== '/') out.write(`installing into ${ready.opts.root}`);
  const steps: Step[] = [];
  const say = (step: Step) => {
    steps.push(step);
    out.write(formatStep(step));
  };
  try {
    const installed = installFiles(ready, deps, say, out);
    return checkAndStart(ready.opts, deps, installed, out);
  } catch (error) {
    out.fail(`homeostat install-service: ${(error as Error).message}`);
    if (steps.length > 0) out.fail('the steps above were done; fix the cause and run it again (it resumes)');
    return 1;
  }
}

/** What the file steps changed that decides whether systemd reloads and the service restarts. */
interface Installed {
  unitChanged: boolean;
  restartWanted: boolean;
}

/**
 * The accounts and every file of the layout (program, link, config, state directory, unit), in
 * that order, each step said as it is done.
 */
function installFiles(ready: Ready, deps: InstallDeps, say: (step: Step) => void, out: Output): Installed {
  const { opts, manifest, config } = ready;
  ensureAccounts(opts.root).forEach(say);
  const ids = serviceIds(opts.root);
  const configOwner: Owner = { uid: 0, gid: ids.gid, label: `root:${SERVICE_GROUP}` };
  const stateOwner: Owner = { uid: ids.uid, gid: ids.gid, label: `${SERVICE_USER}:${SERVICE_GROUP}` };

  const program = manifest
    ? syncProgram(manifest, under(opts.root, PROGRAM_DIR), PROGRAM_DIR, ROOT_OWNER)
    : ({ change: 'unchanged', what: PROGRAM_DIR, detail: 'the installer runs from it' } satisfies Step);
  say(program);
  say(ensureSymlink(under(opts.root, LINK_PATH), LINK_PATH, PROGRAM_CLI));

  const configSteps = [
    ensureDir(under(opts.root, CONFIG_DIR), CONFIG_DIR, 0o750, configOwner),
    installConfig(under(opts.root, CONFIG_PATH), opts.configPath, configOwner),
  ];
  configSteps.forEach(say);
  for (const line of config.warnings) out.write(`  ${line}`);
  out.write(`valid ${CONFIG_PATH} (${config.loops} loop(s))`);

  // The database in it: created 0640 by the store under the unit's UMask=0027, and an older
  // install's 0600 file given group read at the daemon's next start (src/store/database.ts).
  say(ensureDir(under(opts.root, STATE_DIR), STATE_DIR, 0o750, stateOwner));

  const shipped = readFileSync(join(deps.sourceDir, 'systemd', UNIT_NAME), 'utf8');
  const unit = ensureFile(
    under(opts.root, UNIT_PATH),
    UNIT_PATH,
    unitText(shipped, deps.nodePath),
    0o644,
    ROOT_OWNER,
  );
  say(unit);
  return {
    unitChanged: unit.change !== 'unchanged',
    restartWanted: changedAny([program, ...configSteps, unit]),
  };
}

/**
 * After the files: doctor as the service user on the running system, then systemctl (skipped
 * with --no-systemctl; below another root only enabled, never started).
 */
function checkAndStart(opts: InstallOptions, deps: InstallDeps, installed: Installed, out: Output): number {
  const live = deps.live ?? opts.root === '/';
  if (live) runDoctor(deps, out);
  else out.write(`skipped doctor (--root: user ${SERVICE_USER} does not exist on this machine)`);

  if (!opts.systemctl) {
    out.write(
      'skipped systemctl (--no-systemctl): systemctl daemon-reload && systemctl enable --now homeostat',
    );
    return 0;
  }
  if (!live) return enableOffline(opts.root, deps.systemctl, out);
  return startService(deps.systemctl, installed, out);
}

/** A root other than / must be a system tree: shadow's tools edit its etc/passwd and the rest. */
export function rootProblem(root: string): string | undefined {
  if (root === '/') return undefined;
  const missing = ['passwd', 'group', 'shadow', 'gshadow'].filter(
    (name) => lstatOrUndefined(join(root, 'etc', name)) === undefined,
  );
  if (missing.length === 0) return undefined;
  return (
    `--root ${root} has no etc/${missing.join(', etc/')}: the installer adds its user there. ` +
    `Start from copies of this machine's: sudo mkdir -p ${join(root, 'etc')} && ` +
    `sudo cp -p /etc/passwd /etc/group /etc/shadow /etc/gshadow ${join(root, 'etc')}/`
  );
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** Copies `source` when no config is installed; an installed one is never overwritten. */
function installConfig(installed: string, source: string | undefined, owner: Owner): Step {
  const stats = lstatOrUndefined(installed);
  if (stats === undefined) {
    writeAtomic(installed, { copyFrom: source! }, 0o640, owner);
    return { change: 'created', what: CONFIG_PATH, detail: `from ${source}, 0640 ${owner.label}` };
  }
  if (!stats.isFile()) throw new Error(`${CONFIG_PATH} is not a regular file`);
  // The service (group homeostat) must read it: mode and owner are the layout's, the content the user's.
  const changes = fixAttributes(installed, stats, 0o640, owner);
  if (source !== undefined && !readFileSync(installed).equals(readFileSync(source))) {
    return {
      change: 'kept',
      what: CONFIG_PATH,
      detail:
        `it differs from ${source} and is never overwritten; to replace it: ` +
        `sudo install -m 0640 -g ${SERVICE_GROUP} ${source} ${CONFIG_PATH} && sudo systemctl reload homeostat` +
        (changes.length > 0 ? `; ${changes.join(', ')}` : ''),
    };
  }
  return changes.length === 0
    ? { change: 'unchanged', what: CONFIG_PATH, detail: `0640 ${owner.label}` }
    : { change: 'updated', what: CONFIG_PATH, detail: changes.join(', ') };
}

/** doctor's report, indented; a failure is reported, not fatal (no GPIO on a test machine). */
function runDoctor(deps: InstallDeps, out: Output): void {
  out.write(`doctor, as user ${SERVICE_USER}:`);
  const result = deps.doctor(deps.nodePath);
  for (const line of `${result.stdout}${result.stderr}`.split('\n')) {
    if (line.trim() !== '') out.write(`  ${line}`);
  }
  if (result.status === 0) {
    out.write('doctor: no problem found');
  } else {
    out.write(
      `doctor: problems found (exit ${result.status ?? 'killed'}, above). Expected where hardware is missing ` +
        '(no GPIO or 1-Wire on this machine); the service may fail to start until they are fixed. Continuing.',
    );
  }
}
