/**
 * The configuration reference (docs/configuration.md), generated from the config's JSON Schema,
 * which is itself generated from the zod schema: validation, editors and this page read one
 * source, so none of them can tell a different story.
 *
 * Every row is one key of the schema: its type and bounds, its default and its description.
 * A description's "Default …" sentence moves to the default column (it says more than the
 * schema's bare value: "3 × periodS", "the loop id"), and a "Required." sentence goes (the
 * column says it). `npm run schema` writes the page (emit-json-schema.ts); a test checks the
 * committed page equals `configReference(configJsonSchema())` and that `referenceProblems` finds
 * none: every key described, every optional key's default stated and agreeing with the schema.
 */
import { fileURLToPath } from 'node:url';

/** Where the generated reference lives, relative to the repository root. */
export const CONFIG_REFERENCE_PATH = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The parts of a draft-07 JSON Schema that zod emits for this config. */
export interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  deprecated?: boolean;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  pattern?: string;
}

/** One table of the page: the keys of one object (a block, a kind, a nested object). */
interface Table {
  /** Dotted path with placeholders, e.g. `loops.<id>.limits`; '' for the top level. */
  path: string;
  /** Heading text; for a kind of a union, the discriminator (`kind: ds18b20`). */
  heading: string;
  /** Nesting below its section's first table (0 = directly under the section heading). */
  depth: number;
  intro: string;
  rows: Row[];
  /** The variants' tables of a union (sensors, actuators, controller): listed in the intro. */
  variants: Table[];
  /** A union's discriminator key (`kind`, `type`). */
  discriminator?: string;
  /** The union variant a nested table belongs to (`kind: ds18b20` for `sensors.<id>.plausible`). */
  variant?: string;
}

interface Row {
  path: string;
  /** The union variant the row belongs to (`kind: ds18b20`), if any. */
  variant?: string;
  key: string;
  schema: JsonSchema;
  required: boolean;
  /** The table documenting this key's object, if it is one (or holds them). */
  child?: Table;
}

// ---------------------------------------------------------------------------------------
// Walking the schema into tables

/** A key's own value schema: the object a record or list holds, else itself. */
function elementOf(schema: JsonSchema): { element: JsonSchema; suffix: string } {
  if (typeof schema.additionalProperties === 'object' && schema.properties === undefined) {
    return { element: schema.additionalProperties, suffix: '.<id>' };
  }
  if (schema.items !== undefined) return { element: schema.items, suffix: '[]' };
  return { element: schema, suffix: '' };
}

/** Objects and unions get a table; scalars and lists of scalars are rows only. */
function isStructured(schema: JsonSchema): boolean {
  return schema.properties !== undefined || schema.oneOf !== undefined;
}

/** The key every variant of a union fixes to a constant (`kind`, `type`). */
function discriminatorOf(variants: JsonSchema[]): string {
  const first = variants[0]?.properties ?? {};
  const key = Object.keys(first).find((name) =>
    variants.every((variant) => variant.properties?.[name]?.const !== undefined),
  );
  if (key === undefined) throw new Error('a oneOf without a constant discriminator');
  return key;
}

/** The tables of `schema` at `path`: its own, then its nested objects' (depth-first, in key order). */
function tablesOf(
  schema: JsonSchema,
  path: string,
  heading: string,
  depth: number,
  intro: string,
  variant?: string,
): Table[] {
  if (schema.oneOf !== undefined) {
    const discriminator = discriminatorOf(schema.oneOf);
    const union: Table = { path, heading, depth, intro, rows: [], variants: [], discriminator };
    const tables = [union];
    for (const variant of schema.oneOf) {
      const name = String(variant.properties?.[discriminator]?.const);
      const variantTables = tablesOf(
        variant,
        path,
        `${discriminator}: ${name}`,
        depth + 1,
        variant.description ?? '',
        `${discriminator}: ${name}`,
      );
      union.variants.push(variantTables[0]!);
      tables.push(...variantTables);
    }
    return tables;
  }
  const table: Table = { path, heading, depth, intro, rows: [], variants: [] };
  if (variant !== undefined && variant !== heading) table.variant = variant;
  const nested: Table[] = [];
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const keyPath = path === '' ? key : `${path}.${key}`;
    const required = schema.required?.includes(key) ?? false;
    const row: Row = { path: keyPath, key, schema: property, required, ...(variant ? { variant } : {}) };
    const { element, suffix } = elementOf(property);
    if (isStructured(element)) {
      const childPath = keyPath + suffix;
      const childIntro = [property.description, element === property ? undefined : element.description]
        .filter((text): text is string => text !== undefined)
        .join(' ');
      const childTables = tablesOf(element, childPath, childPath, depth + 1, childIntro, variant);
      row.child = childTables[0]!;
      nested.push(...childTables);
    }
    table.rows.push(row);
  }
  return [table, ...nested];
}

// ---------------------------------------------------------------------------------------
// Descriptions, defaults and types as text

/** The description split into what the key means and what its default is (if it says). */
export function splitDescription(description: string): { meaning: string; stated?: string } {
  const sentences = description.split(SENTENCE_END);
  const meaning: string[] = [];
  let stated: string | undefined;
  for (const sentence of sentences) {
    const defaultText = /^Default\b:?\s*(.*?)\.?$/s.exec(sentence);
    if (defaultText !== null && stated === undefined) stated = defaultText[1];
    else if (!/^Required(?::[^.]*)?\.$/.test(sentence)) meaning.push(sentence);
  }
  return { meaning: meaning.join(' '), ...(stated !== undefined ? { stated } : {}) };
}

/** Sentences end at ". " or "… " before a capital: "0.5", "e.g. 28-…" and "-55..125" stay whole. */
const SENTENCE_END = /(?<=[.…])\s+(?=[A-Z])/;

function firstSentence(text: string): string {
  return text.split(SENTENCE_END)[0] ?? '';
}

/** A schema default as YAML would write it. */
function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The default column's text (plain, unescaped), or undefined when the key states none. */
function defaultText(row: Row): string | undefined {
  if (row.required) return 'required';
  if (row.schema.deprecated) return '—';
  const { stated } = splitDescription(row.schema.description ?? '');
  if (stated !== undefined) return stated;
  if (row.schema.default === undefined) return undefined;
  if (row.child !== undefined && formatValue(row.schema.default) === '{}') return 'every key at its default';
  return formatValue(row.schema.default);
}

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** Bounds of a number: `> 0`, `≥ 0`, `0..53`. */
function boundsOf(schema: JsonSchema): string {
  const min = schema.minimum !== undefined && schema.minimum > -SAFE_INTEGER ? schema.minimum : undefined;
  const max = schema.maximum !== undefined && schema.maximum < SAFE_INTEGER ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) return ` ${min}..${max}`;
  const parts = [
    ...(schema.exclusiveMinimum !== undefined ? [`> ${schema.exclusiveMinimum}`] : []),
    ...(min !== undefined ? [`≥ ${min}`] : []),
    ...(max !== undefined ? [`≤ ${max}`] : []),
  ];
  return parts.length > 0 ? ` ${parts.join(', ')}` : '';
}

const code = (text: string) => `\`${text}\``;

/** The constants a schema allows, if it is a choice among constants. */
function choicesOf(schema: JsonSchema): unknown[] | undefined {
  if (schema.const !== undefined) return [schema.const];
  if (schema.enum !== undefined) return schema.enum;
  if (schema.anyOf?.every((option) => option.const !== undefined)) return schema.anyOf.map((o) => o.const);
  return undefined;
}

/** The type column (markdown): type, bounds, allowed values, a link to a nested table. */
function typeText(schema: JsonSchema, link: (table: Table) => string, child?: Table): string {
  const choices = choicesOf(schema);
  if (choices !== undefined) {
    const listed = choices.map((choice) => code(formatValue(choice))).join(', ');
    return choices.length === 1 ? listed : `one of ${listed}`;
  }
  if (typeof schema.additionalProperties === 'object' && schema.properties === undefined) {
    const key = schema.propertyNames?.pattern !== undefined ? ` (${code(schema.propertyNames.pattern)})` : '';
    return `map: id${key} → ${typeText(schema.additionalProperties, link, child)}`;
  }
  if (schema.items !== undefined) return `list of ${typeText(schema.items, link, child)}`;
  if (child !== undefined) return link(child);
  switch (schema.type) {
    case 'number':
    case 'integer':
      return `${schema.type}${boundsOf(schema)}`;
    case 'string': {
      const length =
        schema.minLength !== undefined && schema.minLength > 1 ? `, ≥ ${schema.minLength} characters` : '';
      const pattern = schema.pattern !== undefined ? ` matching ${code(schema.pattern)}` : '';
      return `string${pattern}${length}`;
    }
    default:
      return schema.type ?? 'any';
  }
}

/** Text safe in a table cell and outside code: `<id>` shows, `|` does not end the cell. */
function markdownText(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('|', '\\|')
    .replaceAll('*', '\\*')
    .replace(/\s*\n\s*/g, ' ');
}

// ---------------------------------------------------------------------------------------
// Problems a reader would hit

/** Every row of every table, depth-first. */
function rowsOf(tables: Table[]): Row[] {
  return tables.flatMap((table) => table.rows);
}

/**
 * What makes the reference incomplete or wrong, one line per key: no description, an optional
 * key whose default is stated nowhere, a stated default that is not the schema's.
 */
export function referenceProblems(schema: JsonSchema): string[] {
  // A field shared by several kinds is one problem, naming the kinds.
  const problems = new Map<string, string[]>();
  const add = (row: Row, message: string) => {
    const key = `${row.path}: ${message}`;
    problems.set(key, [...(problems.get(key) ?? []), ...(row.variant ? [row.variant] : [])]);
  };
  for (const row of rowsOf(tablesOf(schema, '', '', 0, ''))) {
    const { meaning, stated } = splitDescription(row.schema.description ?? '');
    if (meaning.trim() === '') add(row, 'no description of what it means');
    if (defaultText(row) === undefined)
      add(row, 'optional without a default: end its description with "Default …."');
    const value = row.schema.default;
    if (stated === undefined || value === undefined || typeof value === 'object') continue;
    if (!stated.startsWith(formatValue(value))) {
      add(row, `its description says "Default ${stated}", its schema ${formatValue(value)}`);
    }
  }
  return [...problems].map(([problem, variants]) =>
    variants.length > 0 ? `${problem} (${variants.join(', ')})` : problem,
  );
}

// ---------------------------------------------------------------------------------------
// The page

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorMaker(): (heading: string) => string {
  const seen = new Map<string, number>();
  return (heading) => {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replaceAll(' ', '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** Sections of the page, by the path of their tables: loop safety and controllers apart from loops. */
const SAFETY_KEYS = ['effectWatch', 'cutoff', 'stuckWatch', 'runawayWatch', 'interlocks'];

function sectionOf(path: string): string {
  if (path === '') return 'Top level';
  if (path.startsWith('loops.<id>.controller')) return 'Controllers';
  if (SAFETY_KEYS.some((key) => path.startsWith(`loops.<id>.${key}`))) return 'Loop safety';
  return path.split('.')[0]!;
}

/** Order of the sections; the rest (a new block) follows in schema order. */
const SECTION_ORDER = [
  'Top level',
  'node',
  'mqtt',
  'http',
  'storage',
  'gpio',
  'sensors',
  'actuators',
  'loops',
  'Controllers',
  'Loop safety',
  'simulation',
];

/** What a section that is not a block of the file says first. */
const SECTION_INTROS: Record<string, string> = {
  'Top level': 'The blocks of a config file. Only `version`, `node`, `sensors` and `loops` are required.',
  'Loop safety':
    'Per-loop monitors beyond the stale and implausible readings that always send a loop safe. ' +
    'Each is off until its key is written; a latched fault keeps every actuator of the loop at its ' +
    'safe state until it is reset (MQTT `<loop>/fault/reset`, the dashboard or the Home Assistant ' +
    'button). Actuators have their own limits (`maxOnS`, `maxStartsPerHour`, `safeState`): see ' +
    'their kinds under [actuators](#actuators).',
};

const HEADER = `# Configuration reference

<!-- Generated from the zod schema (src/config/schema/, src/kinds/) by \`npm run schema\`: do not
edit by hand. Change a description there and run \`npm run schema\`; a test keeps this file in sync. -->

A homeostat config is one YAML file (on an installed Pi, \`/etc/homeostat/config.yaml\`). It
starts with \`version: 1\`; an unknown key is an error, so a typo never falls back to a default
silently. \`homeostat validate --config FILE\` prints one \`path: message\` line per problem.

- Durations are seconds, and their keys end in \`S\` (\`periodS\`, \`windowS\`).
- A loop's values (setpoint, limits, tolerances, bands) are in the loop's unit: °C for
  \`quantity: temperature\`, %RH for \`humidity\`, the sensor's own unit for \`generic\`.
- Ids (\`<id>\` below) are the names you give sensors, actuators, loops and plants: lowercase
  letters, digits, \`_\` and \`-\` (loop ids: no \`-\`, they become Home Assistant entity ids).
- Editors complete and check a file that starts with
  \`# yaml-language-server: $schema=./homeostat.schema.json\`
  ([config/homeostat.schema.json](../config/homeostat.schema.json), generated from the same
  schema as this page).
- Worked examples, each saying in its first lines what it needs: [config/demo.yaml](../config/demo.yaml) (simulated,
  needs nothing), [config/pi-starter.yaml](../config/pi-starter.yaml) (a Pi with one DS18B20 and one relay, what
  \`homeostat init\` writes), [config/greenhouse-pi.yaml](../config/greenhouse-pi.yaml), [config/fermenter-pi.yaml](../config/fermenter-pi.yaml),
  [config/tank-pi.yaml](../config/tank-pi.yaml) (Raspberry Pi), [config/fermenter-mqtt.yaml](../config/fermenter-mqtt.yaml) (MQTT devices only).
`;

/** The page, from the config's JSON Schema (`configJsonSchema()`). */
export function configReference(schema: JsonSchema): string {
  const sections = new Map<string, Table[]>();
  for (const table of tablesOf(schema, '', 'Top level', 0, '')) {
    const section = sectionOf(table.path);
    sections.set(section, [...(sections.get(section) ?? []), table]);
  }
  const order = [...new Set([...SECTION_ORDER.filter((name) => sections.has(name)), ...sections.keys()])];

  // Anchors first, in page order, so a row can link to a table further down the page.
  const anchor = anchorMaker();
  const sectionAnchors = new Map(order.map((name) => [name, anchor(name)]));
  const anchors = new Map<Table, string>();
  for (const name of order) {
    for (const table of sections.get(name)!) {
      anchors.set(
        table,
        sitsUnder(name, table, sections) ? sectionAnchors.get(name)! : anchor(headingOf(table)),
      );
    }
  }
  const link = (table: Table) =>
    `[${table.discriminator !== undefined ? `object by ${code(table.discriminator)}` : 'object'}](#${anchors.get(table)})`;

  const out = [
    HEADER,
    '## Contents',
    '',
    ...order.map((name) => `- [${name}](#${sectionAnchors.get(name)})`),
  ];
  for (const name of order) {
    const tables = sections.get(name)!;
    const first = tables[0]!;
    // Below the section heading: the first table's heading is the section's, or level 3.
    const topLevel = sitsUnder(name, first, sections) ? first.depth + 1 : first.depth;
    out.push('', `## ${name}`, '');
    if (SECTION_INTROS[name] !== undefined) out.push(SECTION_INTROS[name], '');
    for (const table of tables) {
      if (!sitsUnder(name, table, sections)) {
        out.push(`${'#'.repeat(Math.min(6, 3 + table.depth - topLevel))} ${headingOf(table)}`, '');
      }
      out.push(...tableLines(table, anchors, link), '');
    }
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/**
 * Whether a table is the section itself (no heading of its own): a block's table (`mqtt`,
 * `loops.<id>`), or the union a section is made of (the sensor kinds, the controllers).
 */
function sitsUnder(section: string, table: Table, sections: Map<string, Table[]>): boolean {
  if (sections.get(section)?.[0] !== table) return false;
  if (table.discriminator !== undefined || table.path === '') return true;
  return table.path === section || table.path === `${section}.<id>`;
}

/** A table's heading: its path in code, or a kind's discriminator (`kind: ds18b20`). */
function headingOf(table: Table): string {
  return code(table.heading) + (table.variant !== undefined ? ` (${table.variant})` : '');
}

function tableLines(table: Table, anchors: Map<Table, string>, link: (table: Table) => string): string[] {
  const lines: string[] = [];
  if (table.heading.includes(': ')) lines.push(`In ${code(table.path)}.`, '');
  if (table.intro !== '') lines.push(markdownText(table.intro), '');
  if (table.variants.length > 0) {
    const names = table.variants.map(
      (variant) => `[${code(variant.heading.split(': ')[1]!)}](#${anchors.get(variant)})`,
    );
    lines.push(
      `${code(table.path)} is an object whose ${code(table.discriminator!)} is one of: ${names.join(', ')}.`,
      '',
    );
  }
  if (table.rows.length === 0) return lines;
  lines.push('| key | type | default | description |', '| --- | --- | --- | --- |');
  for (const row of table.rows) {
    const key = code(row.key) + (row.schema.deprecated ? ' (deprecated)' : '');
    const type = typeText(row.schema, link, row.child);
    // A nested object's row says what it is; its table's intro has the whole description.
    const { meaning } = splitDescription(row.schema.description ?? '');
    const text = markdownText(row.child === undefined ? meaning : firstSentence(meaning));
    lines.push(`| ${key} | ${type} | ${defaultCell(row)} | ${text} |`);
  }
  return lines;
}

/** The default column: required in bold, the schema's value in code with the description's words after it. */
function defaultCell(row: Row): string {
  const text = defaultText(row);
  if (text === undefined) return '';
  if (row.required) return '**required**';
  const value = row.schema.default;
  if (value !== undefined && typeof value !== 'object' && text.startsWith(formatValue(value))) {
    return code(formatValue(value)) + markdownText(text.slice(formatValue(value).length));
  }
  return markdownText(text);
}
