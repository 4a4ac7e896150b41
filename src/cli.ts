#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parseDurationMs } from './commands/duration.js';
import { defaultConfigPath, defaultDbPath } from './commands/paths.js';

// Each command's module is loaded when it runs: `homeostat safe` (systemd's ExecStopPost, after
// a crash) must drive the relays without first loading the daemon, SQLite and the MQTT client.

const USAGE = `homeostat — keeps temperatures and humidities where you want them

Usage:
  homeostat run      [--config FILE] [--db FILE] [--mqtt-url URL] [--speed N] [--log-format json|pretty]
  homeostat validate [--config FILE]
  homeostat plan     [--config FILE] [--db FILE]          what applying FILE would change (exit 0 none, 2 changes)
  homeostat status   [--db FILE] [--json]                 every loop's desired and observed state
  homeostat history  LOOP [--since 2h] [--csv] [--db FILE]
  homeostat events   [--since 2h] [--loop LOOP] [--json] [--db FILE]
  homeostat set      LOOP [--setpoint X] [--mode M] [--config FILE] [--mqtt-url URL]
                     sends the change through the broker and waits for the daemon's result
  homeostat doctor   [--config FILE] [--db FILE]          checks GPIO, 1-Wire, broker, database, systemd; says how to fix
  homeostat safe     [--config FILE] [--sysfs-root DIR]   drives every GPIO relay to its safe level and exits
                     (systemd's ExecStopPost=; no database needed); MQTT actuators get their safe command
                     only if the broker answers within 2 s (their dead man's switch, deadManS, covers the
                     rest); exit 0 every GPIO relay safe, 1 a pin failed or the config is invalid

Defaults: --config $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml;
          --db $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db.
Exit codes: 0 ok, 1 error (validate: one "path: message" line per problem), 2 usage.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  let parsed: ReturnType<typeof parseOptions>;
  let sinceMs: number | undefined;
  try {
    parsed = parseOptions(rest);
    sinceMs = parsed.since === undefined ? undefined : Date.now() - parseDurationMs(parsed.since);
  } catch (error) {
    process.stderr.write(`homeostat ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const configPath = parsed.config ?? defaultConfigPath();
  const dbPath = parsed.db ?? defaultDbPath();
  const write = (line: string) => process.stdout.write(`${line}\n`);

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
      });
    case 'doctor':
      return (await import('./commands/doctor.js')).doctorCommand({ configPath, dbPath }, write);
    case 'safe':
      return (await import('./commands/safe.js')).safeCommand(
        { configPath, sysfsRoot: parsed['sysfs-root'] },
        write,
      );
    case 'plan':
      return (await import('./commands/inspect.js')).planCommand({ configPath, dbPath }, write);
    case 'status':
      return (await import('./commands/inspect.js')).statusCommand({ dbPath, json: parsed.json }, write);
    case 'events':
      return eventsFromArgs(parsed, dbPath, sinceMs, write);
    case 'set':
      return setFromArgs(parsed, configPath, write);
    case 'history':
      return historyFromArgs(parsed, dbPath, sinceMs, write);
    default:
      process.stderr.write(`homeostat: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

type Options = ReturnType<typeof parseOptions>;
type Write = (line: string) => void;

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

async function setFromArgs(parsed: Options, configPath: string, write: Write): Promise<number> {
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
      configPath,
      loop,
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(parsed.mode === undefined ? {} : { mode: parsed.mode }),
      ...(parsed['mqtt-url'] === undefined ? {} : { mqttUrl: parsed['mqtt-url'] }),
    },
    write,
  );
}

async function eventsFromArgs(
  parsed: Options,
  dbPath: string,
  sinceMs: number | undefined,
  write: Write,
): Promise<number> {
  return (await import('./commands/inspect.js')).eventsCommand(
    {
      dbPath,
      json: parsed.json,
      ...(sinceMs === undefined ? {} : { sinceMs }),
      ...(parsed.loop ? { loop: parsed.loop } : {}),
    },
    write,
  );
}

async function historyFromArgs(
  parsed: Options,
  dbPath: string,
  sinceMs: number | undefined,
  write: Write,
): Promise<number> {
  const loop = parsed.positionals[0];
  if (!loop) {
    process.stderr.write('homeostat history: name a loop, e.g. homeostat history room --since 2h\n');
    return 2;
  }
  return (await import('./commands/inspect.js')).historyCommand(
    { dbPath, loop, sinceMs: sinceMs ?? Date.now() - 2 * 3_600_000, csv: parsed.csv },
    write,
  );
}

function parseOptions(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
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
      speed: { type: 'string' },
      'log-format': { type: 'string' },
      'sysfs-root': { type: 'string' },
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
  if (logFormat !== undefined && logFormat !== 'json' && logFormat !== 'pretty') {
    throw new Error(`--log-format must be json or pretty, got "${logFormat}"`);
  }
  return { ...values, positionals, speed, 'log-format': logFormat as 'json' | 'pretty' | undefined };
}

main(process.argv.slice(2)).then(
  (code) => {
    // Let the process end by itself, so output piped to another program is written in full;
    // a driver or socket left open must not keep a stopped daemon alive, hence the deadline
    // (unref'd: it only fires if something else still holds the process).
    process.exitCode = code;
    setTimeout(() => process.exit(code), 3_000).unref();
  },
  (error) => {
    process.stderr.write(`homeostat: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
