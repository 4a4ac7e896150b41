import type { z } from 'zod';
import type { CommandKind } from '../control/commands.js';

/**
 * One operation of homeostat, declared once (table.ts): what it does, how it is reached over
 * HTTP, and the command that runs it from the shell. The HTTP routes, the OpenAPI document, the
 * CLI's usage, help and option checks, the API client and the reference pages
 * (docs/api.md, docs/command-line.md), the MQTT command topics and their rows in
 * docs/home-assistant.md are all read from these declarations. An operation's
 * name is its key in the table: the key of its handler (http/routes.ts), its CLI runner
 * (commands/runners.ts) and its client call (commands/api-client.ts).
 */
export interface Operation {
  /** What it does, for the API reference and the OpenAPI document (the CLI's own: `cli.summary`). */
  summary: string;
  http?: HttpSpec;
  /** The MQTT command topics that reach it, each parsed as its kind (control/commands.ts). */
  mqtt?: readonly MqttCommandSpec[];
  cli?: CliSpec;
}

/** One command topic, `<base>/<loop>/<suffix>`. */
export interface MqttCommandSpec {
  /** The topic after `<base>/<loop>/` (`setpoint/set`). */
  suffix: string;
  /** The parser its payload goes to. */
  kind: CommandKind;
  /** What the payload may be and what is refused, for docs/home-assistant.md. */
  payload: string;
}

export interface HttpSpec {
  method: 'GET' | 'POST' | 'DELETE';
  /** `:name` segments are path parameters. */
  path: string;
  /** Changes something: needs the token (or a session) even from a reader the LAN may read. */
  write: boolean;
  /**
   * A command: the parser its body goes to, one of its MQTT topics' (the same bytes, the same
   * rules as over MQTT, stored before the answer).
   */
  command?: CommandKind;
  /** Reachable without any credential (the dashboard's pages, login, the OpenAPI document). */
  open?: boolean;
  /** Query parameters: name → description. */
  query?: Record<string, string>;
  request?: z.ZodType;
  /** What its success answer parses as (the server's promise; checked by test/http). */
  response?: z.ZodType;
  /**
   * How the CLI reads the answer when that must be looser than `response` (unknown fields kept,
   * refusals too): a CLI must not refuse a daemon one field newer than itself.
   */
  client?: z.ZodType;
  /** Non-JSON answers: their content type. */
  produces?: string;
  /** The success status when not 200 (204: no body). */
  status?: number;
}

/**
 * How a command reaches what it works on: `local` (files, the database, the hardware), `api`
 * (the running daemon only), `api-or-db` (the daemon, else the database read-only), `api-or-mqtt`
 * (the daemon, else the broker). Each transport brings its options (--config, --api-url, --db,
 * --mqtt-url).
 */
export type Transport = 'local' | 'api' | 'api-or-db' | 'api-or-mqtt';

/**
 * The positional arguments a command takes: the loop (set, history), the loop and one value
 * (tuning, preset), the loop, an action and a name (profile), an action and an optional value
 * (alert test CHANNEL), the config file (validate, plan, …), the file to write (init), or none.
 */
export type PositionalKind =
  | 'loop'
  | 'loop-value'
  | 'loop-action'
  | 'action-value'
  | 'config'
  | 'out'
  | 'none';

export interface CliOption {
  /** As typed, without the dashes (`since`). */
  name: string;
  /** The value in usage and help (`FILE`, `2h`, `raise|lower`); absent: a flag. */
  value?: string;
  /** What it means and what it defaults to, for a person. */
  description: string;
  /** Shown without brackets in the usage (plot --out, reload --pid); the command checks it. */
  required?: boolean;
}

export interface CliSpec {
  command: string;
  /** The help's first line; default: the operation's summary. */
  summary?: string;
  /** The positional arguments as the usage shows them (`LOOP`, `[FILE]`). */
  args?: string;
  positional: PositionalKind;
  transport: Transport;
  /** Its own options; the transport's follow them. */
  options: CliOption[];
  example: string;
  /** Other operations it calls (plot reads the history). */
  uses?: string[];
}
