#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parseDurationMs } from './operations/duration.js';
import { argumentProblem, COMMANDS, commandHelp, parseProblem } from './commands/help.js';
import { exitWhenDrained, ignoreClosedReaders } from './commands/output.js';
import { defaultConfigPath, defaultDbPath } from './commands/paths.js';
import { homeostatVersion } from './version.js';

// Each command's module is loaded when it runs: `homeostat safe` (systemd's ExecStopPost, after
// a crash) must drive the relays without first loading the daemon, SQLite and the MQTT client.

const USAGE = `homeostat — keeps temperatures and humidities where you want them

Usage:
  homeostat run      [--config FILE] [--db FILE] [--mqtt-url URL] [--speed N] [--http-port N|off] [--log-format json|pretty|journal]
  homeostat validate [--config FILE]
  homeostat plan     [--config FILE] [--db FILE]          what applying FILE would change (exit 0 none, 2 changes)
  homeostat status   [--json] [--config FILE] [--api-url URL] [--db FILE]
                     every loop's desired and observed state
  homeostat history  LOOP [--since 2h] [--csv] [--config FILE] [--api-url URL] [--db FILE]
  homeostat plot     LOOP --out FILE.svg [--since 6h] [--config FILE] [--api-url URL] [--db FILE]
                     the history as an SVG picture (measured, setpoint, output, events)
  homeostat events   [--since 2h] [--loop LOOP] [--json] [--config FILE] [--api-url URL] [--db FILE]
                     status, history and events ask the running daemon's HTTP API (the config's http
                     block, or --api-url); when none answers they read the database and say so on stderr
  homeostat set      LOOP [--setpoint X] [--mode M] [--config FILE] [--api-url URL] [--mqtt-url URL]
                     sends the change to the daemon's HTTP API and prints its result; when none answers,
                     checks the loop against the config and sends it through the broker (if configured)
  homeostat autotune LOOP [--side raise|lower] [--closed-loop 60s] [--max-duration 6h] [--no-wait] [--cancel]
                     asks the daemon to tune the loop's PID (relay experiment), prints its progress and
                     the result; Ctrl-C stops watching, not the run
  homeostat tunings  LOOP [--json]                        the stored tunings, the one in force marked
  homeostat tuning   LOOP VERSION|latest|config           puts a tuning in force (accept, restore, file gains)
  homeostat preset   LOOP NAME|none                       selects a preset of the loop, or none
  homeostat profile  LOOP start NAME|pause|resume|stop    starts, pauses, resumes or stops a profile
  homeostat doctor   [--config FILE] [--db FILE]          checks GPIO, 1-Wire, broker, database, systemd; says how to fix
  homeostat safe     [--config FILE] [--db FILE] [--sysfs-root DIR]
                     drives every GPIO relay to its safe level and exits
                     (systemd's ExecStopPost=; no database needed: the config file, else the last applied
                     config kept beside the database); MQTT actuators get their safe command only if the
                     broker answers within 2 s (their dead man's switch, deadManS, covers the rest); 10 s
                     at most; exit 0 every GPIO relay safe, 1 a pin not confirmed safe or no usable config
  homeostat init     [FILE] [--sensor ID|PATH|sim] [--relay-pin N] [--setpoint X] [--yes]
                     writes a starter config from the DS18B20 and kernel sensors and GPIO chips found
  homeostat install-service   [--config FILE] [--root DIR] [--no-systemctl]
  homeostat uninstall-service [--purge] [--root DIR] [--no-systemctl]
                     installs (removes) the systemd service: user, directories, unit, PATH link
  homeostat reload   --pid PID                           re-reads the config (systemd's ExecReload)

Defaults: --config $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml;
          --db $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db;
          --api-url from the config's http block, else http://127.0.0.1:8734 (token: http.tokenFile,
          sent only to an address off loopback). The daemon found there must be the config's node.id.
Each command answers --help with its options and an example; homeostat --version prints the version.
Exit codes: 0 ok, 1 error (validate: one "path: message" line per problem), 2 usage;
            autotune: 1 refused or aborted, 130 Ctrl-C while watching (the run goes on);
            run: 75 another daemon holds the database, 78 the systemd notify socket is unusable.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    process.stdout.write(`${homeostatVersion()}\n`);
    return 0;
  }
  const help = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!help) {
    process.stderr.write(`homeostat: unknown command "${command}" (see homeostat --help)\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${commandHelp(command, help)}\n`);
    return 0;
  }
  let parsed: ReturnType<typeof parseOptions>;
  let sinceMs: number | undefined;
  try {
    parsed = parseOptions(rest);
    sinceMs = parsed.since === undefined ? undefined : Date.now() - parseDurationMs(parsed.since);
  } catch (error) {
    process.stderr.write(`${parseProblem(command, error)}\n`);
    return 2;
  }
  const problem = argumentProblem(command, help, parsed.given, parsed.positionals);
  const givenConfig = help.positional === 'config' ? parsed.positionals[0] : undefined;
  if (problem || (givenConfig !== undefined && parsed.config !== undefined)) {
    const both = `homeostat ${command}: two configs given (${givenConfig} and --config ${parsed.config}): give one`;
    process.stderr.write(`${problem ?? both}\n`);
    return 2;
  }
  const configPath = givenConfig ?? parsed.config ?? defaultConfigPath();
  // As the service finds it: --db, else the config's storage.path, else the default.
  const dbPath = parsed.db ?? (await configuredDbPath(configPath)) ?? defaultDbPath();
  const write = (line: string) => process.stdout.write(`${line}\n`);
  // Notices (which source answered, and how fresh) go to stderr: stdout stays JSON or CSV.
  const note = (line: string) => process.stderr.write(`${line}\n`);
  const talk = {
    configPath,
    dbPath,
    ...(parsed['api-url'] === undefined ? {} : { apiUrl: parsed['api-url'] }),
    direct: parsed.db !== undefined && parsed['api-url'] === undefined,
  };

  switch (command) {
    case 'validate':
      return validate(configPath, write);
    case 'run':
      return (await import('./commands/run.js')).runCommand({
        configPath,
        dbPath,
        dbPathGiven: parsed.db !== undefined,
        mqttUrl: parsed['mqtt-url'],
        speed: parsed.speed,
        logFormat: parsed['log-format'],
        ...(parsed.httpPort === undefined ? {} : { http: parsed.httpPort }),
      });
    case 'doctor':
      return (await import('./commands/doctor.js')).doctorCommand({ configPath, dbPath }, write);
    case 'safe':
      return (await import('./commands/safe.js')).safeCommand(
        { configPath, dbPath, sysfsRoot: parsed['sysfs-root'] },
        write,
      );
    case 'plan':
      return (await import('./commands/inspect.js')).planCommand({ configPath, dbPath }, write);
    case 'status':
      return (await import('./commands/api-inspect.js')).liveStatusCommand(
        { ...talk, json: parsed.json },
        write,
        note,
      );
    case 'events':
      return (await import('./commands/api-inspect.js')).liveEventsCommand(
        {
          ...talk,
          json: parsed.json,
          ...(parsed.since === undefined ? {} : { since: parsed.since, sinceMs }),
          ...(parsed.loop ? { loop: parsed.loop } : {}),
        },
        write,
        note,
      );
    case 'set':
      return setFromArgs(parsed, talk, { write, note });
    case 'history':
      return historyFromArgs(parsed, talk, sinceMs, { write, note });
    case 'plot':
      return plotFromArgs(parsed, talk, sinceMs, { write, note });
    case 'autotune':
      return autotuneFromArgs(parsed, talk, { write, note });
    case 'tunings':
      return (await import('./commands/tunings.js')).tuningsCommand(
        { ...talk, loop: parsed.positionals[0] ?? '', json: parsed.json },
        write,
        note,
      );
    case 'tuning':
      return tuningFromArgs(parsed, talk, { write, note });
    case 'preset':
      return presetFromArgs(parsed, talk, { write, note });
    case 'profile':
      return profileFromArgs(parsed, talk, { write, note });
    case 'init':
      return (await import('./commands/init.js')).initCommand(
        {
          outPath: parsed.positionals[0] ?? parsed.out ?? defaultConfigPath(),
          sysfsRoot: parsed['sysfs-root'] ?? '/sys',
          ...(parsed.sensor === undefined ? {} : { sensor: parsed.sensor }),
          ...(parsed['relay-pin'] === undefined ? {} : { relayPin: parsed['relay-pin'] }),
          ...(parsed.setpoint === undefined ? {} : { setpoint: parsed.setpoint }),
          ...(parsed.loop === undefined ? {} : { loop: parsed.loop }),
          interactive: !parsed.yes && process.stdin.isTTY === true,
        },
        write,
      );
    case 'install-service':
      return (await import('./commands/install-service.js')).installServiceCommand(
        {
          root: parsed.root ?? '/',
          systemctl: !parsed['no-systemctl'],
          ...(parsed.config === undefined ? {} : { configPath: parsed.config }),
        },
        write,
      );
    case 'uninstall-service':
      return (await import('./commands/install-service.js')).uninstallServiceCommand(
        { root: parsed.root ?? '/', systemctl: !parsed['no-systemctl'], purge: parsed.purge },
        write,
      );
    case 'reload':
      return (await import('./commands/reload.js')).reloadCommand({ pid: parsed.pid }, write);
    default:
      process.stderr.write(`homeostat: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

type Options = ReturnType<typeof parseOptions>;
type Write = (line: string) => void;
/** What status, history, events and set need to find the daemon, or the database. */
type Talk = { configPath: string; dbPath: string; apiUrl?: string; direct: boolean };
type Out = { write: Write; note: Write };

/** `homeostat validate`: one `path: message` line per problem (exit 1), warnings never fail. */
async function validate(configPath: string, write: Write): Promise<number> {
  const { loadConfigFile } = await import('./config/load.js');
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

async function setFromArgs(parsed: Options, talk: Talk, out: Out): Promise<number> {
  const loop = parsed.positionals[0];
  const setpoint = parsed.setpoint === undefined ? undefined : Number(parsed.setpoint);
  if (!loop || (setpoint === undefined && parsed.mode === undefined)) {
    process.stderr.write('homeostat set: name a loop and --setpoint X and/or --mode M\n');
    return 2;
  }
  if (setpoint !== undefined && !Number.isFinite(setpoint)) {
    process.stderr.write(`homeostat set: --setpoint must be a number, got "${parsed.setpoint}"\n`);
    return 2;
  }
  return (await import('./commands/set.js')).setCommand(
    {
      configPath: talk.configPath,
      loop,
      ...(talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl }),
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(parsed.mode === undefined ? {} : { mode: parsed.mode }),
      ...(parsed['mqtt-url'] === undefined ? {} : { mqttUrl: parsed['mqtt-url'] }),
    },
    out.write,
    out.note,
  );
}

async function autotuneFromArgs(parsed: Options, talk: Talk, out: Out): Promise<number> {
  const loop = parsed.positionals[0];
  const usage = (message: string) => {
    process.stderr.write(`homeostat autotune: ${message} (see homeostat autotune --help)\n`);
    return 2;
  };
  if (!loop) return usage('name a loop, e.g. homeostat autotune room');
  const side = parsed.side;
  if (side !== undefined && side !== 'raise' && side !== 'lower') {
    return usage(`--side must be raise or lower, got "${side}"`);
  }
  if (parsed.cancel && parsed.given.some((o) => o !== '--cancel' && o !== '--config' && o !== '--api-url')) {
    return usage('--cancel takes no other autotune option');
  }
  let closedLoopS: number | undefined;
  let maxDurationS: number | undefined;
  try {
    const seconds = (text: string | undefined) =>
      text === undefined ? undefined : parseDurationMs(text) / 1000 || undefined;
    closedLoopS = seconds(parsed['closed-loop']);
    maxDurationS = seconds(parsed['max-duration']);
    if (parsed['closed-loop'] !== undefined && closedLoopS === undefined)
      throw new Error('--closed-loop must be more than 0');
    if (parsed['max-duration'] !== undefined && maxDurationS === undefined)
      throw new Error('--max-duration must be more than 0');
  } catch (error) {
    return usage((error as Error).message);
  }
  return (await import('./commands/autotune.js')).autotuneCommand(
    {
      configPath: talk.configPath,
      loop,
      ...(talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl }),
      ...(side === undefined ? {} : { side }),
      ...(closedLoopS === undefined ? {} : { closedLoopS }),
      ...(maxDurationS === undefined ? {} : { maxDurationS }),
      wait: !parsed['no-wait'],
      cancel: parsed.cancel,
    },
    out.write,
    out.note,
  );
}

async function presetFromArgs(parsed: Options, talk: Talk, out: Out): Promise<number> {
  const [loop, name] = parsed.positionals;
  if (!loop || !name) {
    process.stderr.write(
      'homeostat preset: name a loop and a preset, or none, e.g. homeostat preset living eco\n',
    );
    return 2;
  }
  return (await import('./commands/preset.js')).presetCommand(
    {
      configPath: talk.configPath,
      loop,
      preset: name === 'none' ? null : name,
      ...(talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl }),
    },
    out.write,
    out.note,
  );
}

async function profileFromArgs(parsed: Options, talk: Talk, out: Out): Promise<number> {
  const profile = await import('./commands/profile.js');
  const [loop, ...words] = parsed.positionals;
  const command = profile.parseProfileArgs(words);
  if (!loop || !command) {
    const got = words.length === 0 ? '' : ` (got "${words.join(' ')}")`;
    process.stderr.write(
      `homeostat profile: name a loop and start NAME, pause, resume or stop${got}, e.g. homeostat profile fermenter start ale\n`,
    );
    return 2;
  }
  return profile.profileCommand(
    {
      configPath: talk.configPath,
      loop,
      command,
      ...(talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl }),
    },
    out.write,
    out.note,
  );
}

async function tuningFromArgs(parsed: Options, talk: Talk, out: Out): Promise<number> {
  const tunings = await import('./commands/tunings.js');
  const [loop, text] = parsed.positionals;
  const version = tunings.parseVersion(text);
  if (!loop || version === undefined) {
    const got = text === undefined ? '' : ` (got "${text}")`;
    process.stderr.write(
      `homeostat tuning: name a loop and a version number, latest or config${got}, e.g. homeostat tuning room latest\n`,
    );
    return 2;
  }
  return tunings.tuningCommand(
    {
      configPath: talk.configPath,
      loop,
      version,
      ...(talk.apiUrl === undefined ? {} : { apiUrl: talk.apiUrl }),
    },
    out.write,
    out.note,
  );
}

async function historyFromArgs(
  parsed: Options,
  talk: Talk,
  sinceMs: number | undefined,
  out: Out,
): Promise<number> {
  const loop = parsed.positionals[0];
  if (!loop) {
    process.stderr.write('homeostat history: name a loop, e.g. homeostat history room --since 2h\n');
    return 2;
  }
  // The API gets the duration as written: it measures it on the daemon's clock (--speed).
  return (await import('./commands/api-inspect.js')).liveHistoryCommand(
    {
      ...talk,
      loop,
      since: parsed.since ?? '2h',
      sinceMs: sinceMs ?? Date.now() - 2 * 3_600_000,
      csv: parsed.csv,
    },
    out.write,
    out.note,
  );
}

async function plotFromArgs(
  parsed: Options,
  talk: Talk,
  sinceMs: number | undefined,
  out: Out,
): Promise<number> {
  const loop = parsed.positionals[0];
  if (!loop || parsed.out === undefined) {
    process.stderr.write(
      'homeostat plot: name a loop and --out FILE.svg, e.g. homeostat plot room --out room.svg\n',
    );
    return 2;
  }
  return (await import('./commands/plot.js')).plotCommand(
    {
      ...talk,
      loop,
      since: parsed.since ?? '6h',
      sinceMs: sinceMs ?? Date.now() - 6 * 3_600_000,
      outPath: parsed.out,
    },
    out.write,
    out.note,
  );
}

function parseOptions(args: string[]) {
  const { values, positionals, tokens } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    tokens: true,
    options: {
      json: { type: 'boolean', default: false },
      csv: { type: 'boolean', default: false },
      since: { type: 'string' },
      loop: { type: 'string' },
      setpoint: { type: 'string' },
      mode: { type: 'string' },
      config: { type: 'string' },
      db: { type: 'string' },
      'mqtt-url': { type: 'string' },
      'api-url': { type: 'string' },
      speed: { type: 'string' },
      'log-format': { type: 'string' },
      'sysfs-root': { type: 'string' },
      'http-port': { type: 'string' },
      out: { type: 'string' },
      sensor: { type: 'string' },
      'relay-pin': { type: 'string' },
      yes: { type: 'boolean', default: false },
      root: { type: 'string' },
      'no-systemctl': { type: 'boolean', default: false },
      purge: { type: 'boolean', default: false },
      pid: { type: 'string' },
      side: { type: 'string' },
      'closed-loop': { type: 'string' },
      'max-duration': { type: 'string' },
      'no-wait': { type: 'boolean', default: false },
      cancel: { type: 'boolean', default: false },
    },
  });
  let speed: number | undefined;
  if (values.speed !== undefined) {
    speed = Number(values.speed);
    if (!/^\d+(\.\d+)?$/.test(values.speed) || !(speed > 0)) {
      throw new Error(`--speed must be a positive number, got "${values.speed}"`);
    }
  }
  const logFormat = values['log-format'];
  if (logFormat !== undefined && !['json', 'pretty', 'journal'].includes(logFormat)) {
    throw new Error(`--log-format must be json, pretty or journal, got "${logFormat}"`);
  }
  const apiUrl = values['api-url'];
  if (apiUrl !== undefined && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(apiUrl)) {
    throw new Error(`--api-url must be http://host:port (the daemon's address), got "${apiUrl}"`);
  }
  return {
    ...values,
    positionals,
    speed,
    'log-format': logFormat as 'json' | 'pretty' | 'journal' | undefined,
    httpPort: httpPortOption(values['http-port']),
    /** The options as typed (`--speed`), for the command's own list. */
    given: tokens.flatMap((token) => (token.kind === 'option' ? [token.rawName] : [])),
  };
}

/** `--http-port N` (0: any free port) or `off`: wins over the config's http block. */
function httpPortOption(text: string | undefined): { port: number } | false | undefined {
  if (text === undefined) return undefined;
  if (text === 'off') return false;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new Error(`--http-port must be a port number (0: any free port) or off, got "${text}"`);
  }
  return { port };
}

ignoreClosedReaders();
main(process.argv.slice(2)).then(
  // Every byte reaches a pipe, however slow its reader (src/commands/output.ts).
  (code) => exitWhenDrained(code),
  (error) => {
    process.stderr.write(`homeostat: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

/** The config's storage.path, when the file loads (a broken file is reported by the command). */
async function configuredDbPath(configPath: string): Promise<string | undefined> {
  const { loadConfigFile } = await import('./config/load.js');
  const loaded = loadConfigFile(configPath);
  return loaded.ok ? loaded.config.storage.path : undefined;
}
