import { parseArgs } from 'node:util';
import { everyCliOption } from '../operations/cli-text.js';
import { parseDurationMs } from '../operations/duration.js';
import { homeostatVersion } from '../version.js';
import { argumentProblem, COMMANDS, commandHelp, parseProblem, usageText } from './help.js';
import { defaultConfigPath, defaultDbPath } from './paths.js';
import { type ParsedArgs, RUNNERS } from './runners.js';

// The commands, their options and their help come from the operation table (src/operations);
// each runner (runners.ts) loads its command's module when it runs.

/** Where a command's lines go: stdout (`write`) and stderr (`note`), each line without its newline. */
export interface CliOutput {
  write(line: string): void;
  note(line: string): void;
}

const PROCESS_OUTPUT: CliOutput = {
  write: (line) => process.stdout.write(`${line}\n`),
  note: (line) => process.stderr.write(`${line}\n`),
};

/**
 * `homeostat ARGS…`: the exit code. src/cli.ts runs it on the process's streams; tests of the
 * help and the argument checks run it in their own process with `output` collected.
 */
export async function main(argv: string[], output: CliOutput = PROCESS_OUTPUT): Promise<number> {
  const { write, note } = output;
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    write(usageText());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    // The schema says which databases this version reads (and what a downgrade must restore).
    const { LATEST_VERSION } = await import('../store/migrations.js');
    write(`${homeostatVersion()} (database schema ${LATEST_VERSION})`);
    return 0;
  }
  const help = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!help) {
    note(`homeostat: unknown command "${command}" (see homeostat --help)`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    write(commandHelp(command, help));
    return 0;
  }
  let args: ParsedArgs;
  let sinceMs: number | undefined;
  try {
    args = parseOptions(rest);
    sinceMs = args.text.since === undefined ? undefined : Date.now() - parseDurationMs(args.text.since);
  } catch (error) {
    note(parseProblem(command, error));
    return 2;
  }
  const problem = argumentProblem(command, help, args.given, args.positionals);
  const givenConfig = help.positional === 'config' ? args.positionals[0] : undefined;
  if (problem || (givenConfig !== undefined && args.text.config !== undefined)) {
    const both = `homeostat ${command}: two configs given (${givenConfig} and --config ${args.text.config}): give one`;
    note(problem ?? both);
    return 2;
  }
  const configPath = givenConfig ?? args.text.config ?? defaultConfigPath();
  // As the service finds it: --db, else the config's storage.path, else the default.
  const dbPath = args.text.db ?? (await configuredDbPath(configPath)) ?? defaultDbPath();
  const apiUrl = args.text['api-url'];
  const talk = {
    configPath,
    dbPath,
    ...(apiUrl === undefined ? {} : { apiUrl }),
    direct: args.text.db !== undefined && apiUrl === undefined,
  };
  return RUNNERS[help.operation.name]({
    args,
    talk,
    ...(sinceMs === undefined ? {} : { sinceMs }),
    write,
    note,
  });
}

/** Every option any command takes (help.ts refuses those the command does not). */
const PARSE_OPTIONS = Object.fromEntries(
  [...everyCliOption().values()].map((option) => [
    option.name,
    { type: option.value === undefined ? ('boolean' as const) : ('string' as const) },
  ]),
);

function parseOptions(args: string[]): ParsedArgs {
  const { values, positionals, tokens } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    tokens: true,
    options: PARSE_OPTIONS,
  });
  const text: Record<string, string | undefined> = {};
  const flags: Record<string, boolean> = {};
  for (const [name, { type }] of Object.entries(PARSE_OPTIONS)) {
    const value = values[name];
    if (type === 'boolean') flags[name] = value === true;
    else if (typeof value === 'string') text[name] = value;
  }
  const speed = speedOption(text.speed);
  const logFormat = logFormatOption(text['log-format']);
  const httpPort = httpPortOption(text['http-port']);
  const apiUrl = text['api-url'];
  if (apiUrl !== undefined && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(apiUrl)) {
    throw new Error(`--api-url must be http://host:port (the daemon's address), got "${apiUrl}"`);
  }
  return {
    text,
    flags,
    positionals,
    given: tokens.flatMap((token) => (token.kind === 'option' ? [token.rawName] : [])),
    ...(speed === undefined ? {} : { speed }),
    ...(logFormat === undefined ? {} : { logFormat }),
    ...(httpPort === undefined ? {} : { httpPort }),
  };
}

function speedOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const speed = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(speed > 0)) {
    throw new Error(`--speed must be a positive number, got "${text}"`);
  }
  return speed;
}

function logFormatOption(text: string | undefined): ParsedArgs['logFormat'] {
  if (text !== undefined && !['json', 'pretty', 'journal'].includes(text)) {
    throw new Error(`--log-format must be json, pretty or journal, got "${text}"`);
  }
  return text as ParsedArgs['logFormat'];
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

/** The config's storage.path, when the file loads (a broken file is reported by the command). */
async function configuredDbPath(configPath: string): Promise<string | undefined> {
  const { loadConfigFile } = await import('../config/load.js');
  const loaded = loadConfigFile(configPath);
  return loaded.ok ? loaded.config.storage.path : undefined;
}
