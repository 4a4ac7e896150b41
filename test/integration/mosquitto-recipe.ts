/**
 * What test/integration/mosquitto-recipe.test.ts reads out of the documentation (systemd/README.md,
 * "Mosquitto on the same Pi (optional)"; docs/home-assistant.md, "Who may command"), and a Mosquitto started
 * with the recipe's own settings (step 3) on a free loopback port. Not a test file itself.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/net.js';
import { REPO_ROOT } from './helpers.js';

/** The text of the section `heading` (a `## ` line) of `file` (relative to the repository), up to the next `## `. */
export function docSection(file: string, heading: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file}: no section ${JSON.stringify(heading)}`);
  const end = text.indexOf('\n## ', start + heading.length + 2);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * The first fenced code block after the first line of `text` that contains `marker`, without
 * its fences and with the list item's indentation removed (the blocks of a numbered step are
 * indented three spaces). Throws when there is none.
 */
export function codeBlockAfter(text: string, marker: string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.includes(marker));
  if (at < 0) throw new Error(`no line with ${JSON.stringify(marker)}`);
  const open = lines.findIndex((line, i) => i > at && /^\s*```/.test(line));
  if (open < 0) throw new Error(`no code block after ${JSON.stringify(marker)}`);
  const indent = /^\s*/.exec(lines[open]!)![0].length;
  const close = lines.findIndex((line, i) => i > open && /^\s*```\s*$/.test(line));
  if (close < 0) throw new Error(`unclosed code block after ${JSON.stringify(marker)}`);
  return `${lines
    .slice(open + 1, close)
    .map((line) => line.slice(Math.min(indent, /^\s*/.exec(line)![0].length)))
    .join('\n')}\n`;
}

/** A broker user: name and clear-text password. */
export interface RecipeUser {
  username: string;
  password: string;
}

export interface RecipeBroker {
  url: string;
  /** The broker's log so far, for assertion messages. */
  log(): string;
  stop(): Promise<void>;
}

/** How long the broker may take to accept connections, ms. */
const START_TIMEOUT_MS = 5_000;

/**
 * Starts Mosquitto in `dir` as the recipe sets it up: a password file made with
 * `mosquitto_passwd -c -b` for the first user and `-b` for the others, `acl` as the ACL file,
 * and `settings` (step 3's `homeostat.conf`) with its paths pointed into `dir` and its
 * `listener` line replaced by a free loopback port. Test-only additions: the user to run as
 * (the broker started as root would drop to `mosquitto`, which cannot read `dir`), no
 * persistence, a log file.
 */
export async function startRecipeBroker(opts: {
  dir: string;
  settings: string;
  acl: string;
  users: RecipeUser[];
}): Promise<RecipeBroker> {
  const { dir } = opts;
  const passwdPath = join(dir, 'passwd');
  const aclPath = join(dir, 'acl');
  opts.users.forEach(({ username, password }, i) => {
    const create = i === 0 ? ['-c'] : [];
    execFileSync('mosquitto_passwd', [...create, '-b', passwdPath, username, password], { stdio: 'pipe' });
  });
  chmodSync(passwdPath, 0o600);
  writeFileSync(aclPath, opts.acl, { mode: 0o600 });

  const port = await freePort();
  const settings = opts.settings
    .replace(/^listener .*$/m, `listener ${port} 127.0.0.1`)
    .replace('/etc/mosquitto/passwd', passwdPath)
    .replace('/etc/mosquitto/acl', aclPath);
  const logPath = join(dir, 'mosquitto.log');
  const confPath = join(dir, 'mosquitto.conf');
  writeFileSync(
    confPath,
    [
      `user ${userInfo().username}`,
      'persistence false',
      `log_dest file ${logPath}`,
      'log_type all',
      'connection_messages true',
      settings,
    ].join('\n'),
  );
  const child = spawn(findMosquitto(), ['-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const log = () => {
    try {
      return readFileSync(logPath, 'utf8');
    } catch {
      return '';
    }
  };
  try {
    await waitForPort(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`mosquitto did not start: ${(error as Error).message}\n${stderr}${log()}`);
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function findMosquitto(): string {
  for (const path of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto']) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here; try the next place
    }
  }
  throw new Error('mosquitto not found: install it with `sudo apt-get install -y mosquitto` (CI does)');
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`port ${port} not open within ${START_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
