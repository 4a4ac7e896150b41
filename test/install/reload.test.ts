/**
 * `homeostat reload --pid PID` (the unit's ExecReload): SIGHUP reaches a homeostat daemon, and
 * nothing else; a wrong pid is refused with a clear line. The "daemon" is a child process
 * whose command line is `node …/dist/cli.js run` and which reports the SIGHUP it gets.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { looksLikeDaemon, reloadCommand } from '../../src/commands/reload.js';
import { type HasAfter, tempTree } from '../support/tmp.js';

/** Prints "ready", then "hup" on every SIGHUP (as the daemon reloads); ends on SIGTERM. */
const FAKE_DAEMON = `
process.on('SIGHUP', () => process.stdout.write('hup\\n'));
process.on('SIGTERM', () => process.exit(0));
setInterval(() => {}, 1000);
process.stdout.write('ready\\n');
`;

/** A child running `node <dir>/<script> ...args` that counts its SIGHUPs. */
async function child(t: HasAfter, script: string, args: string[]) {
  const dir = tempTree(t, { [script]: FAKE_DAEMON }, 'homeostat-reload-');
  const proc: ChildProcess = spawn(process.execPath, [join(dir, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => {
    proc.kill('SIGKILL');
  });
  let output = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  while (!output.includes('ready')) await once(proc.stdout!, 'data');
  const hups = async (count: number) => {
    const deadline = Date.now() + 5_000;
    while (output.split('hup').length - 1 < count && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    return output.split('hup').length - 1;
  };
  return { pid: proc.pid!, hups, alive: () => proc.exitCode === null && proc.signalCode === null };
}

function capture() {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, write: (l: string) => lines.push(l), fail: (l: string) => errors.push(l) };
}

describe('homeostat reload', () => {
  test('sends SIGHUP to a homeostat daemon (`node …/dist/cli.js run`) and says so', async (t) => {
    const daemon = await child(t, 'dist/cli.js', ['run', '--config', '/etc/homeostat/config.yaml']);
    const out = capture();
    assert.equal(
      await reloadCommand({ pid: String(daemon.pid) }, out.write, out.fail),
      0,
      out.errors.join('\n'),
    );
    assert.equal(await daemon.hups(1), 1);
    assert.deepEqual(out.lines, [
      `sent SIGHUP to homeostat (pid ${daemon.pid}): it re-reads its config; its log says whether it applied it`,
    ]);
    assert.ok(daemon.alive());
  });

  test('refuses a process that is not a homeostat daemon, and does not signal it', async (t) => {
    const other = await child(t, 'server.js', ['run']);
    const out = capture();
    assert.equal(await reloadCommand({ pid: String(other.pid) }, out.write, out.fail), 1);
    assert.match(
      out.errors[0]!,
      new RegExp(`process ${other.pid} is not a homeostat daemon .*server\\.js run.*not signalled`),
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await other.hups(0), 0);
    assert.ok(other.alive());
  });

  const refusals: Array<[string | undefined, number, RegExp]> = [
    [undefined, 2, /give the daemon's process id: --pid PID/],
    ['', 2, /--pid must be a process id/],
    ['0', 2, /--pid must be a process id/],
    ['-1', 2, /--pid must be a process id/],
    ['12abc', 2, /--pid must be a process id/],
    ['1.5', 2, /--pid must be a process id/],
    ['99999999', 2, /--pid must be a process id/],
    ['4194304', 1, /no process 4194304/],
    // This test process: alive, but not a daemon (SIGHUP would end it).
    [String(process.pid), 1, new RegExp(`process ${process.pid} is not a homeostat daemon`)],
  ];
  for (const [pid, code, message] of refusals) {
    test(`--pid ${JSON.stringify(pid)}: exit ${code}`, async () => {
      const out = capture();
      assert.equal(await reloadCommand({ pid }, out.write, out.fail), code);
      assert.match(out.errors.join('\n'), message);
      assert.deepEqual(out.lines, []);
    });
  }

  const commandLines: Array<[string[], boolean]> = [
    [['/usr/bin/node', '/opt/homeostat/dist/cli.js', 'run'], true],
    [['node', 'dist/cli.js', 'run', '--config', 'config/demo.yaml', '--speed', '60'], true],
    [['/usr/bin/node', '/usr/local/bin/homeostat', 'run'], true],
    [['node', '--import', 'tsx', 'src/cli.ts', 'run'], true],
    [['/usr/bin/node', '/opt/homeostat/dist/cli.js', 'reload', '--pid', '42'], false],
    [['/usr/bin/node', '/opt/homeostat/dist/cli.js', 'history', 'run'], false],
    [['/usr/bin/node', '/srv/app/server.js', 'run'], false],
    [['sshd:', 'pi@pts/0'], false],
    [[], false],
  ];
  for (const [argv, expected] of commandLines) {
    test(`${expected ? 'a daemon' : 'not a daemon'}: ${argv.join(' ') || '(empty)'}`, () =>
      assert.equal(looksLikeDaemon(argv), expected));
  }

  test("the unit's ExecStart is what reload accepts, its ExecReload is not (it never signals itself)", () => {
    const unit = readFileSync(
      fileURLToPath(new URL('../../systemd/homeostat.service', import.meta.url)),
      'utf8',
    );
    const value = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1]?.split(/\s+/) ?? [];
    assert.equal(looksLikeDaemon(value('ExecStart')), true);
    assert.deepEqual(value('ExecReload').slice(2), ['reload', '--pid', '$MAINPID']);
    assert.equal(looksLikeDaemon(value('ExecReload')), false);
  });
});
