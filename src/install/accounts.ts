/**
 * The service's user and groups, through shadow's own tools (useradd, groupadd, usermod,
 * userdel, groupdel: package `passwd`, in every Debian). Below an install root other than `/`
 * they get `--prefix ROOT`, so they edit ROOT/etc/{passwd,group,shadow,gshadow} and nothing of
 * the host; ids are therefore read from those files, never from the host's getpwnam.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { GPIO_GROUP, SERVICE_GROUP, SERVICE_HOME, SERVICE_SHELL, SERVICE_USER, under } from './layout.js';
import type { Step } from './steps.js';

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

/** ROOT/etc/passwd, one entry per well-formed line. */
export function readPasswd(root: string): PasswdEntry[] {
  return readColonFile(under(root, '/etc/passwd'), 7).map((f) => ({
    name: f[0]!,
    uid: Number(f[2]),
    gid: Number(f[3]),
    home: f[5]!,
    shell: f[6]!,
  }));
}

/** ROOT/etc/group, one entry per well-formed line. */
export function readGroups(root: string): GroupEntry[] {
  return readColonFile(under(root, '/etc/group'), 4).map((f) => ({
    name: f[0]!,
    gid: Number(f[2]),
    members: f[3]! === '' ? [] : f[3]!.split(','),
  }));
}

function readColonFile(path: string, fields: number): string[][] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((f) => f.length === fields && f[0] !== '' && /^\d+$/.test(f[2]!));
}

export function findUser(root: string, name: string): PasswdEntry | undefined {
  return readPasswd(root).find((entry) => entry.name === name);
}

export function findGroup(root: string, name: string): GroupEntry | undefined {
  return readGroups(root).find((entry) => entry.name === name);
}

/** The uid and gid files of the service get: from ROOT/etc, after {@link ensureAccounts}. */
export function serviceIds(root: string): { uid: number; gid: number } {
  const user = findUser(root, SERVICE_USER);
  const group = findGroup(root, SERVICE_GROUP);
  if (!user || !group) throw new Error(`user or group ${SERVICE_USER} missing in ${under(root, '/etc')}`);
  return { uid: user.uid, gid: group.gid };
}

/** Runs a shadow tool; a failure throws with its own message (it names the cause). */
function shadowTool(root: string, tool: string, args: string[]): void {
  const prefix = root === '/' ? [] : ['--prefix', root];
  const result = spawnSync(tool, [...prefix, ...args], { encoding: 'utf8' });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(`${tool} not found: apt-get install -y passwd`);
  }
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${tool} ${args.join(' ')} failed (exit ${result.status}): ${result.stderr.trim()}`);
  }
}

/**
 * Group gpio (system group, if missing), user homeostat (system user, group homeostat, home
 * /var/lib/homeostat not created here, no login shell) and its membership in gpio. A user
 * that exists already is kept as it is (an older install's home /nonexistent works as well);
 * only a missing gpio membership is added.
 */
export function ensureAccounts(root: string): Step[] {
  const steps: Step[] = [];
  if (findGroup(root, GPIO_GROUP)) {
    steps.push({ change: 'unchanged', what: `group ${GPIO_GROUP}` });
  } else {
    shadowTool(root, 'groupadd', ['--system', GPIO_GROUP]);
    steps.push({
      change: 'created',
      what: `group ${GPIO_GROUP}`,
      detail: `system group, gid ${findGroup(root, GPIO_GROUP)?.gid}; Raspberry Pi OS's udev rule gives it /sys/class/gpio`,
    });
  }

  const existing = findUser(root, SERVICE_USER);
  if (existing) {
    steps.push({ change: 'unchanged', what: `user ${SERVICE_USER}`, detail: `uid ${existing.uid}` });
    steps.push(ensureGpioMember(root, existing));
  } else {
    // A group of that name left by an earlier install becomes the user's group; useradd
    // --user-group would refuse it.
    const group = findGroup(root, SERVICE_GROUP) ? ['--gid', SERVICE_GROUP] : ['--user-group'];
    shadowTool(root, 'useradd', [
      '--system',
      ...group,
      '--home-dir',
      SERVICE_HOME,
      '--no-create-home',
      '--shell',
      SERVICE_SHELL,
      '--groups',
      GPIO_GROUP,
      '--comment',
      'homeostat daemon',
      SERVICE_USER,
    ]);
    const user = findUser(root, SERVICE_USER);
    steps.push({
      change: 'created',
      what: `user ${SERVICE_USER}`,
      detail:
        `system user, uid ${user?.uid}, group ${SERVICE_GROUP}, also in ${GPIO_GROUP}, ` +
        `home ${SERVICE_HOME} (not created), shell ${SERVICE_SHELL}`,
    });
  }
  return steps;
}

/** An existing user (an earlier install, or made by hand) gains group gpio if it lacks it. */
function ensureGpioMember(root: string, user: PasswdEntry): Step {
  const gpio = findGroup(root, GPIO_GROUP)!;
  if (gpio.members.includes(SERVICE_USER) || user.gid === gpio.gid) {
    return { change: 'unchanged', what: `user ${SERVICE_USER} in group ${GPIO_GROUP}` };
  }
  shadowTool(root, 'usermod', ['--append', '--groups', GPIO_GROUP, SERVICE_USER]);
  return { change: 'updated', what: `user ${SERVICE_USER}`, detail: `added to group ${GPIO_GROUP}` };
}

/** Deletes user homeostat and its group (`--purge`); group gpio stays (other programs use it). */
export function removeAccounts(root: string): Step[] {
  const steps: Step[] = [];
  if (findUser(root, SERVICE_USER)) {
    shadowTool(root, 'userdel', [SERVICE_USER]);
    steps.push({ change: 'removed', what: `user ${SERVICE_USER}` });
  } else {
    steps.push({ change: 'unchanged', what: `user ${SERVICE_USER}`, detail: 'not there' });
  }
  // userdel removes the user's group only where login.defs says USERGROUPS_ENAB yes (not in
  // a bare --prefix tree), so remove what is left.
  if (findGroup(root, SERVICE_GROUP)) {
    shadowTool(root, 'groupdel', [SERVICE_GROUP]);
    steps.push({ change: 'removed', what: `group ${SERVICE_GROUP}` });
  } else {
    steps.push({ change: 'unchanged', what: `group ${SERVICE_GROUP}`, detail: 'not there' });
  }
  return steps;
}
