import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { makeTempDir as makeSupportTempDir } from '../support/tmp.js';

export { DEMO_CONFIG_PATH, demoConfigText } from '../support/config.js';

/**
 * Helpers for integration tests that run homeostat as a child process, the way systemd does:
 * `node --import tsx src/cli.ts …` from the repository root, JSON logs on stdout, real SQLite
 * files in a temporary directory. Nothing here knows a particular test.
 */

/** The repository root: children run from here so `--import tsx` and `src/cli.ts` resolve. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One pino JSON log line; the other fields depend on the message. */
export interface LogLine {
  level: number;
  /** Wall-clock time of the line, ms since epoch (pino's `time`, never the scaled clock). */
  time: number;
  msg: string;
  [field: string]: unknown;
}

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What a line must be: its exact `msg`, a pattern for `msg`, or any test of the whole line. */
export type LineMatch = string | RegExp | ((line: LogLine) => boolean);

const live = new Set<CliProcess>();

/**
 * A running `homeostat` command. Collects stdout and stderr, parses stdout's JSON log lines as
 * they arrive, and lets a test wait for a line or kill the process with any signal.
 */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Wall-clock time the process was spawned, ms since epoch. */
  readonly spawnedAtMs = Date.now();
  /** Resolves once the process has exited (never rejects). */
  readonly exited: Promise<Exit>;
  private stdoutText = '';
  private stderrText = '';
  private partial = '';
  private readonly parsed: LogLine[] = [];
  private exit: Exit | undefined;
  private readonly listeners = new Set<() => void>();

  /** `opts.prefix`: a command that runs node (`ip netns exec <ns>`: the fault scenarios' LAN). */
  constructor(args: string[], opts: { env?: NodeJS.ProcessEnv; prefix?: string[] } = {}) {
    const [command, ...before] = [...(opts.prefix ?? []), process.execPath];
    this.child = spawn(command!, [...before, '--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    live.add(this);
    this.child.stdin.end();
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrText += chunk;
    });
    this.exited = new Promise<Exit>((resolve) => {
      // 'close', not 'exit': by then every byte of stdout has been read.
      this.child.on('close', (code, signal) => {
        this.exit = { code, signal };
        live.delete(this);
        this.notify();
        resolve(this.exit);
      });
    });
  }

  get stdout(): string {
    return this.stdoutText;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Everything printed so far, for assertion messages. */
  get output(): string {
    return `--- stdout ---\n${this.stdoutText}\n--- stderr ---\n${this.stderrText}`;
  }

  /** The JSON log lines printed so far (non-JSON stdout lines are left out). */
  get lines(): readonly LogLine[] {
    return this.parsed;
  }

  /** Undefined while running. */
  get exitStatus(): Exit | undefined {
    return this.exit;
  }

  /** The first line printed so far that matches, if any. */
  find(match: LineMatch): LogLine | undefined {
    const test = toPredicate(match);
    return this.parsed.find(test);
  }

  /** Every line printed so far that matches. */
  filter(match: LineMatch): LogLine[] {
    return this.parsed.filter(toPredicate(match));
  }

  /**
   * Resolves with the first matching line (already printed or to come). Rejects, with the
   * output so far, when the process exits first or `timeoutMs` (wall clock) passes.
   */
  waitForLine(match: LineMatch, timeoutMs = 20_000): Promise<LogLine> {
    const test = toPredicate(match);
    return new Promise<LogLine>((resolve, reject) => {
      const check = (): boolean => {
        const found = this.parsed.find(test);
        if (found) {
          done();
          resolve(found);
          return true;
        }
        if (this.exit) {
          done();
          reject(new Error(`exited (${describeExit(this.exit)}) before ${String(match)}:\n${this.output}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no line ${String(match)} within ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
      const listener = () => void check();
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      if (!check()) this.listeners.add(listener);
    });
  }

  /** Sends `signal` (default SIGKILL, i.e. `kill -9`) and resolves once the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (!this.exit) this.child.kill(signal);
    return this.exited;
  }

  private onStdout(chunk: string): void {
    this.stdoutText += chunk;
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const part of parts) {
      const line = parseLogLine(part);
      if (line) this.parsed.push(line);
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

function parseLogLine(text: string): LogLine | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && typeof (value as LogLine).msg === 'string') {
      return value as LogLine;
    }
  } catch {
    // A line that is not JSON (a stray print) is kept in `stdout` only.
  }
  return undefined;
}

function toPredicate(match: LineMatch): (line: LogLine) => boolean {
  if (typeof match === 'string') return (line) => line.msg === match;
  if (match instanceof RegExp) return (line) => match.test(line.msg);
  return match;
}

function describeExit(exit: Exit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

/** Options of {@link startDaemon}. */
export interface DaemonStart {
  configPath: string;
  dbPath: string;
  /** `--speed`; default 60 (one simulated minute per real second). */
  speed?: number;
  /** More command-line arguments, appended. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** A command that runs node, before it (`ip netns exec <ns>`). */
  prefix?: string[];
}

/** Starts `homeostat run --config C --db D --speed N --log-format json` as a child process. */
export function startDaemon(opts: DaemonStart): CliProcess {
  return new CliProcess(
    [
      'run',
      '--config',
      opts.configPath,
      '--db',
      opts.dbPath,
      '--speed',
      String(opts.speed ?? 60),
      '--log-format',
      'json',
      // Any free port: test daemons run side by side (and beside one a developer may run).
      '--http-port',
      '0',
      ...(opts.args ?? []),
    ],
    { ...(opts.env ? { env: opts.env } : {}), ...(opts.prefix ? { prefix: opts.prefix } : {}) },
  );
}

/** Runs a one-shot command (`status`, `plan`, …) to its end; rejects after `timeoutMs`. */
export async function runCli(
  args: string[],
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = new CliProcess(args);
  const timer = setTimeout(() => void run.kill('SIGKILL'), timeoutMs);
  const exit = await run.exited;
  clearTimeout(timer);
  if (exit.signal)
    throw new Error(`homeostat ${args.join(' ')} killed after ${timeoutMs} ms:\n${run.output}`);
  return { code: exit.code, stdout: run.stdout, stderr: run.stderr };
}

/** Kills (SIGKILL) every process started here that is still running: for `after` hooks. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((run) => run.kill('SIGKILL')));
}

/**
 * Polls `probe` until it returns something other than undefined/false; rejects after
 * `timeoutMs` (wall clock) naming `what`. For conditions no log line announces (a row in the db).
 */
export async function waitUntil<T>(
  probe: () => T | undefined | false,
  opts: { what: string; timeoutMs?: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what}`);
    await sleep(opts.intervalMs ?? 20);
  }
}

/** Wall-clock wait (for letting a child process run; never for timing assertions). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A fresh temporary directory and a function that deletes it (test/support/tmp.ts, named `homeostat-it-…`). */
export function makeTempDir(prefix = 'homeostat-it-'): { dir: string; remove: () => void } {
  return makeSupportTempDir(prefix);
}

/** Opens a database file read-only (the daemon may be running: WAL lets both read). */
export function openReadOnly(dbPath: string): Database.Database {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/** Runs `use` on a read-only connection and closes it. */
export function withReadOnlyDb<T>(dbPath: string, use: (db: Database.Database) => T): T {
  const db = openReadOnly(dbPath);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): varied but reproducible delays. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
