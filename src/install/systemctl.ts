/**
 * systemctl and the doctor run, behind functions the installer is given: the tests pass fakes
 * that record what was asked (a container test runs the real ones under a real systemd).
 */
import { spawnSync } from 'node:child_process';
import { CONFIG_DIR, CONFIG_PATH, PROGRAM_CLI, SERVICE_USER, STATE_DIR } from './layout.js';

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export type Systemctl = (args: string[]) => CommandResult;

export const realSystemctl: Systemctl = (args) => run('systemctl', args, {});

/**
 * `homeostat doctor` as the service user, seeing the directories the unit gives it
 * ($CONFIGURATION_DIRECTORY, $STATE_DIRECTORY): what it finds is what the service will find.
 * runuser (util-linux, in every Debian) needs no sudo and no PAM session; cwd / because
 * root's working directory is not the service user's to read.
 */
export function realDoctor(nodePath: string): CommandResult {
  return run(
    'runuser',
    ['-u', SERVICE_USER, '--', nodePath, PROGRAM_CLI, 'doctor', '--config', CONFIG_PATH],
    {
      cwd: '/',
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        CONFIGURATION_DIRECTORY: CONFIG_DIR,
        STATE_DIRECTORY: STATE_DIR,
        NODE_ENV: 'production',
      },
      // doctor waits for the broker a few seconds at most; a minute means it hangs.
      timeout: 60_000,
    },
  );
}

function run(
  program: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number },
): CommandResult {
  const result = spawnSync(program, args, { encoding: 'utf8', ...options });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    return { status: 127, stdout: '', stderr: `${program} not found` };
  }
  if (result.error) return { status: null, stdout: result.stdout ?? '', stderr: result.error.message };
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
