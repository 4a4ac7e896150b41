import {
  commandOptions,
  commandSummary,
  commandUsage,
  optionLines,
  transportNote,
  usageParts,
  wrap,
  wrapWords,
} from '../operations/cli-text.js';
import type { PositionalKind } from '../operations/operation.js';
import { CLI_OPERATIONS, type CliOperation } from '../operations/table.js';

/**
 * What each command accepts and says about itself, read from the operation table
 * (src/operations): `homeostat --help`, `homeostat <command> --help`, the options a command
 * takes (others are refused with one line naming its help), and how many positional arguments.
 */

export interface CommandHelp {
  /** One line: what it does. */
  summary: string;
  usage: string;
  /** The options it takes, as `--name`, each with its help line. */
  options: Record<string, string>;
  example: string;
  positional: PositionalKind;
  operation: CliOperation;
}

function commandHelpOf(operation: CliOperation): CommandHelp {
  const options = commandOptions(operation.cli);
  const lines = optionLines(options);
  return {
    summary: commandSummary(operation),
    usage: commandUsage(operation.cli),
    options: Object.fromEntries(options.map((option, index) => [`--${option.name}`, lines[index]!])),
    example: operation.cli.example,
    positional: operation.cli.positional,
    operation,
  };
}

/** Every command by name, in the order `homeostat --help` lists them. */
export const COMMANDS: Record<string, CommandHelp> = Object.fromEntries(
  CLI_OPERATIONS.map((operation) => [operation.cli.command, commandHelpOf(operation)]),
);

/** How many positional arguments each kind takes at most. */
const POSITIONALS_AT_MOST: Record<PositionalKind, number> = {
  loop: 1,
  'loop-value': 2,
  'loop-action': 3,
  'action-value': 2,
  config: 1,
  out: 1,
  none: 0,
};

const WIDTH = 100;

/** `homeostat --help`: every command's usage and what it does, then the defaults and exit codes. */
export function usageText(): string {
  const configArgs = CLI_OPERATIONS.filter(({ cli }) => cli.positional === 'config').map(
    ({ cli }) => cli.command,
  );
  const commands = CLI_OPERATIONS.flatMap((operation) => {
    const { cli } = operation;
    // The config file as an argument is said once, below, to keep these lines short.
    const parts = usageParts(cli, { args: cli.positional !== 'config' });
    const head = `  homeostat ${cli.command.padEnd(8)} `;
    const [first = '', ...more] = wrapWords(parts, WIDTH, ' '.repeat(head.length));
    return [`${head}${first.trimStart()}`, ...more, ...wrap(commandSummary(operation), WIDTH, '      ')];
  });
  return [
    'homeostat — keeps temperatures and humidities where you want them',
    '',
    'Usage:',
    ...commands,
    '',
    `${list(configArgs)} also take the config file as their argument (homeostat validate config/demo.yaml).`,
    'Defaults: --config $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml;',
    "          --db the config's storage.path, else $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db;",
    "          --api-url from the config's http block, else http://127.0.0.1:8734 (token: http.tokenFile,",
    "          sent only to an address off loopback). The daemon found there must be the config's node.id.",
    'Each command answers --help with its options and an example; homeostat --version prints the version.',
    'Exit codes: 0 ok, 1 error (validate: one "path: message" line per problem), 2 usage (plan: changes);',
    '            autotune: 1 refused or aborted, 130 Ctrl-C while watching (the run goes on);',
    '            run: 75 another daemon holds the database, 78 the systemd notify socket is unusable.',
  ].join('\n');
}

/** `homeostat <command> --help`. */
export function commandHelp(name: string, help: CommandHelp): string {
  const how = transportNote(help.operation);
  const options = [...commandOptions(help.operation.cli), { name: 'help', description: 'this text' }];
  const helpLine = optionLines(options).at(-1)!;
  return [
    `homeostat ${name} — ${help.summary}`,
    '',
    `Usage: ${help.usage}`,
    '',
    'Options:',
    ...Object.values(help.options).map((line) => `  ${line}`),
    `  ${helpLine}`,
    ...(how === '' ? [] : ['', ...wrap(`How: ${how}.`, WIDTH, '')]),
    '',
    `Example: ${help.example}`,
  ].join('\n');
}

/**
 * The one-line message for arguments a command does not take, naming its help; undefined when
 * they are fine. `given` are the option names as typed (`--speed`).
 */
export function argumentProblem(
  name: string,
  help: CommandHelp,
  given: readonly string[],
  positionals: readonly string[],
): string | undefined {
  const refused = given.find((option) => !Object.hasOwn(help.options, option));
  if (refused !== undefined) {
    return `homeostat ${name}: ${refused} is not an option of ${name} (see homeostat ${name} --help)`;
  }
  const most = POSITIONALS_AT_MOST[help.positional];
  if (positionals.length > most) {
    const extra = positionals[most]!;
    return `homeostat ${name}: unexpected argument "${extra}" (see homeostat ${name} --help)`;
  }
  return undefined;
}

/** One line for what Node's argument parser refused, naming the command's help. */
export function parseProblem(name: string, error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const flag = /'(--?[\w-]+)/.exec(message ?? '')?.[1];
  const see = `(see homeostat ${name} --help)`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag)
    return `homeostat ${name}: unknown option ${flag} ${see}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag)
    return `homeostat ${name}: ${flag} needs a value ${see}`;
  return `homeostat ${name}: ${message ?? String(error)}`;
}

function list(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
