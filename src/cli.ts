#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { defaultConfigPath, defaultDbPath } from './commands/paths.js';
import { runCommand } from './commands/run.js';
import { loadConfigFile } from './config/load.js';

const USAGE = `homeostat — keeps temperatures and humidities where you want them

Usage:
  homeostat run      [--config FILE] [--db FILE] [--mqtt-url URL] [--speed N] [--log-format json|pretty]
  homeostat validate [--config FILE]

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
  try {
    parsed = parseOptions(rest);
  } catch (error) {
    process.stderr.write(`homeostat ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const configPath = parsed.config ?? defaultConfigPath();

  switch (command) {
    case 'validate': {
      const result = loadConfigFile(configPath);
      if (!result.ok) {
        for (const line of result.errors) process.stdout.write(`${line}\n`);
        return 1;
      }
      process.stdout.write(`${configPath}: valid (${Object.keys(result.config.loops).length} loop(s))\n`);
      return 0;
    }
    case 'run':
      return runCommand({
        configPath,
        dbPath: parsed.db ?? defaultDbPath(),
        mqttUrl: parsed['mqtt-url'],
        speed: parsed.speed,
        logFormat: parsed['log-format'],
      });
    default:
      process.stderr.write(`homeostat: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      config: { type: 'string' },
      db: { type: 'string' },
      'mqtt-url': { type: 'string' },
      speed: { type: 'string' },
      'log-format': { type: 'string' },
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
  return { ...values, speed, 'log-format': logFormat as 'json' | 'pretty' | undefined };
}

main(process.argv.slice(2)).then(
  (code) => {
    // Exit explicitly: a driver or socket left open must not keep a stopped daemon alive.
    process.exit(code);
  },
  (error) => {
    process.stderr.write(`homeostat: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
