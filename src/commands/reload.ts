/**
 * `homeostat reload --pid PID`: makes the running daemon re-read its config by sending it
 * SIGHUP. systemd's ExecReload= runs it with $MAINPID, so reloading needs nothing but node
 * (`/bin/kill` is procps, which a minimal Debian lacks: ExecReload then fails with 203/EXEC).
 *
 * It signals only a process that is a homeostat daemon (`… cli.js run`, read from
 * /proc/PID/cmdline): SIGHUP's default action ends a process, so a stale or mistyped pid must
 * not reach anything else.
 */
import { readFileSync } from 'node:fs';

/** Linux's largest pid_max (2^22). */
const PID_MAX = 4_194_304;

/** The program names a daemon's command line has: the built CLI, the link, the source under tsx. */
const CLI_NAMES = new Set(['cli.js', 'cli.ts', 'homeostat']);

/**
 * True when `argv` (from /proc/PID/cmdline) is `… <cli.js|homeostat> run …`: the command is
 * the first argument after the program, as src/cli.ts reads it.
 */
export function looksLikeDaemon(argv: readonly string[]): boolean {
  const cli = argv.findIndex((arg) => CLI_NAMES.has(arg.slice(arg.lastIndexOf('/') + 1)));
  return cli >= 0 && argv[cli + 1] === 'run';
}

export async function reloadCommand(
  opts: { pid: string | undefined; procDir?: string },
  write: (line: string) => void,
  fail: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const refuse = (line: string, code: number) => {
    fail(`homeostat reload: ${line}`);
    return code;
  };
  if (opts.pid === undefined) {
    return refuse("give the daemon's process id: --pid PID (systemd passes $MAINPID)", 2);
  }
  const pid = Number(opts.pid);
  if (!/^[0-9]+$/.test(opts.pid) || !Number.isSafeInteger(pid) || pid < 1 || pid > PID_MAX) {
    return refuse(`--pid must be a process id (a whole number from 1 to ${PID_MAX}), got "${opts.pid}"`, 2);
  }
  let argv: string[];
  try {
    argv = readFileSync(`${opts.procDir ?? '/proc'}/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(code === 'ENOENT' ? `no process ${pid}` : `cannot read process ${pid}: ${code}`, 1);
  }
  if (!looksLikeDaemon(argv)) {
    const shown = argv.join(' ').slice(0, 200) || '(no command line: a kernel thread or a zombie)';
    return refuse(`process ${pid} is not a homeostat daemon (\`${shown}\`): not signalled`, 1);
  }
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EPERM' ? "not allowed (run it as the daemon's user or root)" : code;
    return refuse(`cannot signal process ${pid}: ${why}`, 1);
  }
  write(`sent SIGHUP to homeostat (pid ${pid}): it re-reads its config; its log says whether it applied it`);
  return 0;
}
