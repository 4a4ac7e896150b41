import { TRANSPORT_NOTES, TRANSPORT_OPTIONS } from './cli-options.js';
import type { CliOption, CliSpec } from './operation.js';
import { CLI_OPERATIONS, type CliOperation } from './table.js';

/**
 * The CLI as text, from the table: each command's usage line and option list, for
 * `homeostat --help`, `homeostat <command> --help` and docs/command-line.md alike.
 */

/** A command's options: its own, then its transport's. */
export function commandOptions(spec: CliSpec): CliOption[] {
  return [...spec.options, ...TRANSPORT_OPTIONS[spec.transport]];
}

/** `--since 2h`, or `--json` for a flag. */
export function optionText(option: CliOption): string {
  return option.value === undefined ? `--${option.name}` : `--${option.name} ${option.value}`;
}

/** What follows `homeostat <command>` in its usage: the positionals, then each option. */
export function usageParts(spec: CliSpec, { args = true }: { args?: boolean } = {}): string[] {
  const options = commandOptions(spec).map((option) =>
    option.required ? optionText(option) : `[${optionText(option)}]`,
  );
  return [...(args && spec.args ? [spec.args] : []), ...options];
}

/** `homeostat history LOOP [--since 2h] [--csv] …`; `args: false` leaves the positionals out. */
export function commandUsage(spec: CliSpec, opts: { args?: boolean } = {}): string {
  return ['homeostat', spec.command, ...usageParts(spec, opts)].join(' ');
}

/** The column descriptions start at; a longer option has its description on the next line. */
const OPTION_COLUMN = 18;

/**
 * The option list of a command's help: `--since 2h        how far back …`, aligned, each entry
 * to be printed after two spaces.
 */
export function optionLines(options: readonly CliOption[]): string[] {
  return options.map((option) => {
    const text = optionText(option);
    return text.length <= OPTION_COLUMN - 2
      ? `${text.padEnd(OPTION_COLUMN)}${option.description}`
      : `${text}\n  ${' '.repeat(OPTION_COLUMN)}${option.description}`;
  });
}

export function commandSummary(operation: CliOperation): string {
  return operation.cli.summary ?? operation.summary;
}

/** How the command reaches the node, in a sentence naming its HTTP route; empty for a local one. */
export function transportNote(operation: CliOperation): string {
  const note = TRANSPORT_NOTES[operation.cli.transport];
  if (note === '' || operation.http === undefined) return note;
  const route = `${operation.http.method} ${operation.http.path.replace(/:(\w+)/g, '{$1}')}`;
  return note.replace('HTTP API', `HTTP API (${route})`);
}

/** Every option any command takes, by name; one name is one kind (a flag, or one with a value). */
export function everyCliOption(): Map<string, CliOption> {
  const options = new Map<string, CliOption>();
  for (const { cli } of CLI_OPERATIONS) {
    for (const option of commandOptions(cli)) {
      const known = options.get(option.name);
      if (known && (known.value === undefined) !== (option.value === undefined)) {
        throw new Error(`--${option.name} is a flag for one command and takes a value for another`);
      }
      options.set(option.name, known ?? option);
    }
  }
  return options;
}

/** `text` in lines of at most `width` characters, each after `indent`. */
export function wrap(text: string, width: number, indent: string): string[] {
  return wrapWords(text.split(/\s+/), width, indent);
}

/** Words (or usage parts) in lines of at most `width` characters, each after `indent`. */
export function wrapWords(words: readonly string[], width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(`${indent}${line}`);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(`${indent}${line}`);
  return lines;
}
