import { parseDurationMs } from '../operations/duration.js';
import type { CliOperationName } from '../operations/table.js';
import { defaultConfigPath } from './paths.js';

/**
 * What each CLI command runs, keyed by its operation (src/operations/table.ts): the compiler
 * refuses a command without a runner. The option parsing and the usage checks are done before
 * (src/cli.ts, help.ts); a runner turns the parsed arguments into its command's options.
 * Each command's module is loaded when it runs: `homeostat safe` (systemd's ExecStopPost, after
 * a crash) must drive the relays without first loading the daemon, SQLite and the MQTT client.
 */

/** The command line, parsed: option values by name (as typed, without dashes), flags, positionals. */
export interface ParsedArgs {
  text: Record<string, string | undefined>;
  flags: Record<string, boolean>;
  positionals: string[];
  /** The options as typed (`--speed`), for the command's own list. */
  given: string[];
  speed?: number;
  logFormat?: 'json' | 'pretty' | 'journal';
  /** `--http-port N` (0: any free port) or `off`. */
  httpPort?: { port: number } | false;
}

type Write = (line: string) => void;

/** What status, history, events and set need to find the daemon, or the database. */
export type Talk = { configPath: string; dbPath: string; apiUrl?: string; direct: boolean };

export interface RunContext {
  args: ParsedArgs;
  talk: Talk;
  /** `--since` as a time (ms), measured now. */
  sinceMs?: number;
  write: Write;
  /** Notices (which source answered, and how fresh) go to stderr: stdout stays JSON or CSV. */
  note: Write;
}

export type Runner = (context: RunContext) => Promise<number>;

const api = (talk: Talk) => (talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl });

/** What every command that talks to a loop's daemon takes: the config, the loop, --api-url. */
const toLoop = (talk: Talk, loop: string) => ({ configPath: talk.configPath, loop, ...api(talk) });

/** Refused arguments: one line on stderr (`note`), exit 2. */
function usage(note: Write, message: string): number {
  note(message);
  return 2;
}

export const RUNNERS: Record<CliOperationName, Runner> = {
  run: async ({ args, talk }) =>
    (await import('./run.js')).runCommand({
      configPath: talk.configPath,
      dbPath: talk.dbPath,
      dbPathGiven: args.text.db !== undefined,
      mqttUrl: args.text['mqtt-url'],
      speed: args.speed,
      logFormat: args.logFormat,
      ...(args.httpPort === undefined ? {} : { http: args.httpPort }),
    }),
  validate: ({ talk, write }) => validate(talk.configPath, write),
  plan: async ({ talk, write }) =>
    (await import('./inspect.js')).planCommand({ configPath: talk.configPath, dbPath: talk.dbPath }, write),
  loops: async ({ args, talk, write, note }) =>
    (await import('./api-inspect.js')).liveStatusCommand(
      { ...talk, json: args.flags.json === true },
      write,
      note,
    ),
  loopHistory: historyFromArgs,
  plot: plotFromArgs,
  events: async ({ args, talk, sinceMs, write, note }) =>
    (await import('./api-inspect.js')).liveEventsCommand(
      {
        ...talk,
        json: args.flags.json === true,
        ...(args.text.since === undefined ? {} : { since: args.text.since, sinceMs }),
        ...(args.text.loop ? { loop: args.text.loop } : {}),
      },
      write,
      note,
    ),
  tunings: async ({ args, talk, write, note }) =>
    (await import('./tunings.js')).tuningsCommand(
      { ...talk, loop: args.positionals[0] ?? '', json: args.flags.json === true },
      write,
      note,
    ),
  setLoop: setFromArgs,
  autotune: autotuneFromArgs,
  applyTuning: tuningFromArgs,
  selectPreset: presetFromArgs,
  commandProfile: profileFromArgs,
  testAlerts: alertFromArgs,
  doctor: async ({ talk, write }) =>
    (await import('./doctor.js')).doctorCommand({ configPath: talk.configPath, dbPath: talk.dbPath }, write),
  safe: async ({ args, talk, write, note }) =>
    (await import('./safe.js')).safeCommand(
      { configPath: talk.configPath, dbPath: talk.dbPath, sysfsRoot: args.text['sysfs-root'], note },
      write,
    ),
  init: initFromArgs,
  installService: async ({ args, write }) =>
    (await import('./install-service.js')).installServiceCommand(
      {
        root: args.text.root ?? '/',
        systemctl: !args.flags['no-systemctl'],
        ...(args.text.config === undefined ? {} : { configPath: args.text.config }),
      },
      write,
    ),
  uninstallService: async ({ args, write }) =>
    (await import('./install-service.js')).uninstallServiceCommand(
      {
        root: args.text.root ?? '/',
        systemctl: !args.flags['no-systemctl'],
        purge: args.flags.purge === true,
      },
      write,
    ),
  backup: async ({ args, talk, write, note }) =>
    (await import('./backup.js')).backupCommand(
      {
        configPath: talk.configPath,
        dbPath: talk.dbPath,
        file: args.positionals[0],
        dir: args.text.dir,
        keep: args.text.keep,
        includeSecrets: args.flags['include-secrets'] === true,
      },
      { write, note },
    ),
  restore: async ({ args, talk, write, note }) =>
    (await import('./restore.js')).restoreCommand(
      {
        configPath: talk.configPath,
        dbPath: talk.dbPath,
        file: args.positionals[0],
        databaseOnly: args.flags['database-only'] === true,
      },
      { write, note },
    ),
  reload: async ({ args, write }) =>
    (await import('./reload.js')).reloadCommand({ pid: args.text.pid }, write),
};

/** `homeostat validate`: one `path: message` line per problem (exit 1), warnings never fail. */
async function validate(configPath: string, write: Write): Promise<number> {
  const { loadConfigFile } = await import('../config/load.js');
  const result = loadConfigFile(configPath);
  if (!result.ok) {
    for (const line of result.errors) write(line);
    return 1;
  }
  // Warnings (`path: message (deprecated)`) never fail validation: the file still works.
  for (const line of result.warnings) write(line);
  write(`${configPath}: valid (${Object.keys(result.config.loops).length} loop(s))`);
  return 0;
}

async function initFromArgs({ args, write }: RunContext): Promise<number> {
  const { text, flags } = args;
  return (await import('./init.js')).initCommand(
    {
      outPath: args.positionals[0] ?? text.out ?? defaultConfigPath(),
      sysfsRoot: text['sysfs-root'] ?? '/sys',
      ...(text.sensor === undefined ? {} : { sensor: text.sensor }),
      ...(text['relay-pin'] === undefined ? {} : { relayPin: text['relay-pin'] }),
      ...(text.setpoint === undefined ? {} : { setpoint: text.setpoint }),
      ...(text.loop === undefined ? {} : { loop: text.loop }),
      interactive: !flags.yes && process.stdin.isTTY === true,
    },
    write,
  );
}

async function setFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const loop = args.positionals[0];
  const { setpoint: setpointText, mode } = args.text;
  const setpoint = setpointText === undefined ? undefined : Number(setpointText);
  if (!loop || (setpoint === undefined && mode === undefined)) {
    return usage(note, 'homeostat set: name a loop and --setpoint X and/or --mode M');
  }
  if (setpoint !== undefined && !Number.isFinite(setpoint)) {
    return usage(note, `homeostat set: --setpoint must be a number, got "${setpointText}"`);
  }
  return (await import('./set.js')).setCommand(
    {
      ...toLoop(talk, loop),
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(mode === undefined ? {} : { mode }),
      ...(args.text['mqtt-url'] === undefined ? {} : { mqttUrl: args.text['mqtt-url'] }),
    },
    write,
    note,
  );
}

async function autotuneFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const refuse = (message: string) =>
    usage(note, `homeostat autotune: ${message} (see homeostat autotune --help)`);
  const loop = args.positionals[0];
  if (!loop) return refuse('name a loop, e.g. homeostat autotune room');
  const side = args.text.side;
  if (side !== undefined && side !== 'raise' && side !== 'lower') {
    return refuse(`--side must be raise or lower, got "${side}"`);
  }
  if (
    args.flags.cancel &&
    args.given.some((o) => o !== '--cancel' && o !== '--config' && o !== '--api-url')
  ) {
    return refuse('--cancel takes no other autotune option');
  }
  let closedLoopS: number | undefined;
  let maxDurationS: number | undefined;
  try {
    closedLoopS = positiveSeconds(args.text['closed-loop'], '--closed-loop');
    maxDurationS = positiveSeconds(args.text['max-duration'], '--max-duration');
  } catch (error) {
    return refuse((error as Error).message);
  }
  return (await import('./autotune.js')).autotuneCommand(
    {
      ...toLoop(talk, loop),
      ...(side === undefined ? {} : { side }),
      ...(closedLoopS === undefined ? {} : { closedLoopS }),
      ...(maxDurationS === undefined ? {} : { maxDurationS }),
      wait: !args.flags['no-wait'],
      cancel: args.flags.cancel === true,
    },
    write,
    note,
  );
}

/** A duration option in seconds, above 0; undefined when not given. */
function positiveSeconds(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDurationMs(text) / 1000;
  if (!(seconds > 0)) throw new Error(`${name} must be more than 0`);
  return seconds;
}

async function presetFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const [loop, name] = args.positionals;
  if (!loop || !name) {
    return usage(
      note,
      'homeostat preset: name a loop and a preset, or none, e.g. homeostat preset living eco',
    );
  }
  return (await import('./preset.js')).presetCommand(
    { ...toLoop(talk, loop), preset: name === 'none' ? null : name },
    write,
    note,
  );
}

async function profileFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const profile = await import('./profile.js');
  const [loop, ...words] = args.positionals;
  const command = profile.parseProfileArgs(words);
  if (!loop || !command) {
    const got = words.length === 0 ? '' : ` (got "${words.join(' ')}")`;
    return usage(
      note,
      `homeostat profile: name a loop and start NAME, pause, resume or stop${got}, e.g. homeostat profile fermenter start ale`,
    );
  }
  return profile.profileCommand({ ...toLoop(talk, loop), command }, write, note);
}

async function alertFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const [action, channel] = args.positionals;
  if (action !== 'test') {
    const got = action === undefined ? '' : ` (got "${action}")`;
    return usage(
      note,
      `homeostat alert: say test, and a channel or none${got}, e.g. homeostat alert test phone`,
    );
  }
  return (await import('./alert.js')).alertTestCommand(
    { configPath: talk.configPath, ...api(talk), channel },
    write,
    note,
  );
}

async function tuningFromArgs({ args, talk, write, note }: RunContext): Promise<number> {
  const tunings = await import('./tunings.js');
  const [loop, text] = args.positionals;
  const version = tunings.parseVersion(text);
  if (!loop || version === undefined) {
    const got = text === undefined ? '' : ` (got "${text}")`;
    return usage(
      note,
      `homeostat tuning: name a loop and a version number, latest or config${got}, e.g. homeostat tuning room latest`,
    );
  }
  return tunings.tuningCommand({ ...toLoop(talk, loop), version }, write, note);
}

async function historyFromArgs({ args, talk, sinceMs, write, note }: RunContext): Promise<number> {
  const loop = args.positionals[0];
  if (!loop) return usage(note, 'homeostat history: name a loop, e.g. homeostat history room --since 2h');
  // The API gets the duration as written: it measures it on the daemon's clock (--speed).
  return (await import('./api-inspect.js')).liveHistoryCommand(
    {
      ...talk,
      loop,
      since: args.text.since ?? '2h',
      sinceMs: sinceMs ?? Date.now() - 2 * 3_600_000,
      csv: args.flags.csv === true,
    },
    write,
    note,
  );
}

async function plotFromArgs({ args, talk, sinceMs, write, note }: RunContext): Promise<number> {
  const loop = args.positionals[0];
  const outPath = args.text.out;
  if (!loop || outPath === undefined) {
    return usage(
      note,
      'homeostat plot: name a loop and --out FILE.svg, e.g. homeostat plot room --out room.svg',
    );
  }
  return (await import('./plot.js')).plotCommand(
    {
      ...talk,
      loop,
      since: args.text.since ?? '6h',
      sinceMs: sinceMs ?? Date.now() - 6 * 3_600_000,
      outPath,
    },
    write,
    note,
  );
}
