import type { CommandKind } from '../control/commands.js';
import { MAINTENANCE_COMMANDS, SETUP_COMMANDS } from './local-commands.js';
import type { CliSpec, HttpSpec, MqttCommandSpec, Operation } from './operation.js';
import { READ_OPERATIONS } from './read-operations.js';
import { WRITE_OPERATIONS } from './write-operations.js';

/**
 * Every operation of homeostat, in the order the CLI's help lists its commands: running and
 * checking, reading, changing, then installing and maintaining. Adding one: an entry here (and
 * its schemas), its handler (http/routes.ts) and its CLI runner (commands/runners.ts), both
 * checked by the compiler; a command it carries over MQTT too needs its `mqtt` topics and its
 * parser (control/commands.ts); `npm run docs` rewrites the reference pages.
 */
export const OPERATIONS = {
  ...SETUP_COMMANDS,
  ...READ_OPERATIONS,
  ...WRITE_OPERATIONS,
  ...MAINTENANCE_COMMANDS,
} satisfies Record<string, Operation>;

type Table = typeof OPERATIONS;
export type OperationName = keyof Table;
/** The operations served over HTTP: each needs a handler. */
export type HttpOperationName = {
  [K in OperationName]: Table[K] extends { http: HttpSpec } ? K : never;
}[OperationName];
/** The operations with a CLI command: each needs a runner. */
export type CliOperationName = {
  [K in OperationName]: Table[K] extends { cli: CliSpec } ? K : never;
}[OperationName];

export type HttpOperation = Operation & { name: HttpOperationName; http: HttpSpec };
export type CliOperation = Operation & { name: CliOperationName; cli: CliSpec };

const entries = Object.entries(OPERATIONS) as Array<[OperationName, Operation]>;

/** The operations served over HTTP, in table order. */
export const HTTP_OPERATIONS: readonly HttpOperation[] = entries.flatMap(([name, operation]) =>
  operation.http ? [{ ...operation, name: name as HttpOperationName, http: operation.http }] : [],
);

/** The CLI's commands, in the order its help lists them. */
export const CLI_OPERATIONS: readonly CliOperation[] = entries.flatMap(([name, operation]) =>
  operation.cli ? [{ ...operation, name: name as CliOperationName, cli: operation.cli }] : [],
);

/** The operation behind a CLI command (`set` → setLoop); undefined for an unknown command. */
export function cliOperation(command: string): CliOperation | undefined {
  return CLI_OPERATIONS.find((operation) => operation.cli.command === command);
}

/** One MQTT command topic and the operation it belongs to. */
export type MqttCommand = MqttCommandSpec & { operation: OperationName };

/** Every MQTT command topic, in table order (mqtt/topics.ts subscribes to exactly these). */
export const MQTT_COMMANDS: readonly MqttCommand[] = entries.flatMap(([name, operation]) =>
  (operation.mqtt ?? []).map((spec) => ({ ...spec, operation: name })),
);

/** The parser an operation's HTTP body goes to (its `http.command`). Throws for one without. */
export function httpCommandKind(name: OperationName): CommandKind {
  const kind = (OPERATIONS[name] as Operation).http?.command;
  if (kind === undefined) throw new Error(`operation ${name} has no MQTT command to parse its body as`);
  return kind;
}

type MqttKind = {
  [K in OperationName]: Table[K] extends { mqtt: readonly { kind: infer Kind }[] } ? Kind : never;
}[OperationName];

/**
 * Checked by the compiler: every command kind control/commands.ts parses is reached by an MQTT
 * topic of the table (a kind added without one fails to compile here).
 */
export const EVERY_COMMAND_KIND_HAS_A_TOPIC: [Exclude<CommandKind, MqttKind>] extends [never] ? true : never =
  true;
