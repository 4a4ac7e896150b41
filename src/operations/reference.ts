import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { commandOptions, commandSummary, commandUsage, optionText, transportNote } from './cli-text.js';
import type { HttpSpec } from './operation.js';
import { apiSchemas } from './registry.js';
import { CLI_OPERATIONS, HTTP_OPERATIONS, type HttpOperation, MQTT_COMMANDS } from './table.js';

/**
 * The reference pages generated from the operation table: docs/api.md (whole), the command
 * part of docs/command-line.md and the command topics of docs/home-assistant.md (between their
 * markers; the prose around them is written by hand). `npm run docs` rewrites them;
 * test/operations/reference.test.ts checks they are in sync.
 */

export const API_REFERENCE_PATH = fileURLToPath(new URL('../../docs/api.md', import.meta.url));
export const COMMAND_LINE_PATH = fileURLToPath(new URL('../../docs/command-line.md', import.meta.url));
export const HOME_ASSISTANT_PATH = fileURLToPath(new URL('../../docs/home-assistant.md', import.meta.url));

type JsonSchema = {
  type?: string | string[];
  $ref?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
};

const route = (http: HttpSpec) => `${http.method} ${http.path.replace(/:(\w+)/g, '{$1}')}`;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/api.md: every route, who may call it, its query, body and answer, and its CLI command. */
export function apiReference(): string {
  const { schemas } = z.toJSONSchema(apiSchemas, { target: 'draft-2020-12', uri: (id) => `#${id}` });
  const cliOf = (name: string) =>
    CLI_OPERATIONS.filter((op) => op.name === name || op.cli.uses?.includes(name)).map(
      (op) => `\`homeostat ${op.cli.command}\``,
    );
  const lines = [
    '# HTTP API',
    '',
    '<!-- Generated from src/operations (the operation table): run `npm run docs` after changing it. -->',
    '',
    'The daemon serves this API and the dashboard on `http.port` (default 8734). From this machine',
    'nothing is needed; from elsewhere, writes (and reads unless `http.publicReads`) need',
    '`Authorization: Bearer <token>` (`http.tokenFile`). Writes must be `application/json` and',
    'same-site. The machine-readable form is `GET /api/openapi.json` (OpenAPI 3.1). Times are',
    "ISO 8601; values are in the loop's unit. Every CLI command that asks the daemon first asks",
    '`GET /api/node` whether the node there is the one its config names.',
    '',
    '| Route | What | Writes | CLI |',
    '| --- | --- | --- | --- |',
    ...HTTP_OPERATIONS.map(
      (op) =>
        `| [\`${route(op.http)}\`](#${anchor(route(op.http))}) | ${cell(op.summary)} | ${op.http.write ? 'yes' : ''} | ${cliOf(op.name).join(', ')} |`,
    ),
    '',
  ];
  for (const op of HTTP_OPERATIONS)
    lines.push(...operationSection(op, schemas as Record<string, JsonSchema>, cliOf(op.name)));
  return `${lines.join('\n').trimEnd()}\n`;
}

function operationSection(op: HttpOperation, schemas: Record<string, JsonSchema>, cli: string[]): string[] {
  const { http } = op;
  const access = http.open ? 'open to anyone' : http.write ? 'a write: the token off this machine' : 'a read';
  const lines = [`## ${route(http)}`, '', `${op.summary}.`.replace(/\.\.$/, '.'), '', `- Access: ${access}`];
  for (const [name, description] of Object.entries(http.query ?? {})) {
    lines.push(`- Query \`${name}\`: ${description}`);
  }
  if (http.request) lines.push(`- Body: ${shape(http.request, schemas)}`);
  const status = http.status ?? 200;
  if (http.response) lines.push(`- Answer ${status}: ${shape(http.response, schemas)}`);
  else if (http.produces) lines.push(`- Answer ${status}: \`${http.produces}\``);
  else lines.push(`- Answer ${status}${status === 204 ? ': no body' : ''}`);
  const topics = (op.mqtt ?? []).map(({ suffix }) => `\`<base>/<loop>/${suffix}\``);
  if (topics.length > 0)
    lines.push(`- MQTT: ${topics.join(', ')} ([topics](home-assistant.md#command-topics))`);
  if (cli.length > 0) lines.push(`- CLI: ${cli.join(', ')}`);
  return [...lines, ''];
}

/** `SetRequest`: its fields with their types, and whether each may be left out. */
function shape(schema: z.ZodType, schemas: Record<string, JsonSchema>): string {
  const id = apiSchemas.get(schema)?.id ?? '(unnamed)';
  const json = schemas[id];
  const fields = Object.entries(json?.properties ?? {}).map(([name, field]) => {
    const optional = json?.required?.includes(name) ? '' : '?';
    return `\`${name}${optional}\` ${typeName(field)}`;
  });
  return fields.length === 0 ? `\`${id}\`` : `\`${id}\` { ${fields.join(', ')} }`;
}

function typeName(schema: JsonSchema): string {
  if (schema.$ref) return schema.$ref.replace(/^#/, '');
  if (schema.anyOf) return schema.anyOf.map(typeName).join(' | ');
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'array') return `${schema.items ? typeName(schema.items) : 'unknown'}[]`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  return schema.type ?? 'any';
}

/** GitHub's anchor of a heading. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

const USAGE_START = '<!-- usage: generated from src/operations by `npm run docs` -->';
const MQTT_START = '<!-- command topics: generated from src/operations by `npm run docs` -->';
const OPTIONS_START = '<!-- options: generated from src/operations by `npm run docs` -->';
const END = '<!-- end of generated part -->';

/** docs/command-line.md with its two generated parts (the usage, each command's options) rewritten. */
export function commandLineReference(page: string): string {
  const withUsage = replaceBetween('docs/command-line.md', page, USAGE_START, usageBlock());
  return replaceBetween('docs/command-line.md', withUsage, OPTIONS_START, optionsSections());
}

/** docs/home-assistant.md with its table of command topics rewritten from the table's `mqtt`. */
export function homeAssistantReference(page: string): string {
  return replaceBetween('docs/home-assistant.md', page, MQTT_START, commandTopicsTable());
}

function commandTopicsTable(): string {
  const httpRoute = (name: string) => {
    const op = HTTP_OPERATIONS.find((candidate) => candidate.name === name);
    return op ? `\`${route(op.http)}\`` : '';
  };
  return [
    '| topic | payload | the operation over HTTP |',
    '| --- | --- | --- |',
    ...MQTT_COMMANDS.map(
      (command) =>
        `| \`<base>/<loop>/${command.suffix}\` | ${cell(command.payload)} | ${httpRoute(command.operation)} |`,
    ),
  ].join('\n');
}

function usageBlock(): string {
  return ['```', ...CLI_OPERATIONS.map((op) => commandUsage(op.cli)), '```'].join('\n');
}

function optionsSections(): string {
  return CLI_OPERATIONS.flatMap((op) => {
    const how = transportNote(op);
    const options = commandOptions(op.cli).map(
      (option) => `- \`${optionText(option)}\`: ${option.description}`,
    );
    return [
      `### homeostat ${op.cli.command}`,
      '',
      `${commandSummary(op)}.`.replace(/\.\.$/, '.').replace(/^./, (first) => first.toUpperCase()),
      ...(how === '' ? [] : ['', `It ${how}.`]),
      '',
      '```',
      commandUsage(op.cli),
      '```',
      '',
      ...(options.length === 0 ? [] : [...options, '']),
      `Example: \`${op.cli.example}\``,
      '',
    ];
  })
    .join('\n')
    .trimEnd();
}

function replaceBetween(name: string, page: string, start: string, content: string): string {
  const from = page.indexOf(start);
  const to = page.indexOf(END, from);
  if (from < 0 || to < 0) throw new Error(`${name}: the markers ${start} … ${END} are missing`);
  return `${page.slice(0, from + start.length)}\n${content}\n${page.slice(to)}`;
}
