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
 * The schema's walk into tables is reference-tables.ts, the text of a row reference-text.ts.
 */
import { fileURLToPath } from 'node:url';
import { LOOP_MONITORS } from '../kinds/monitors/registry.js';
import { type JsonSchema, type Table, tablesOf } from './reference-tables.js';
import {
  code,
  defaultCell,
  firstSentence,
  markdownText,
  splitDescription,
  typeText,
} from './reference-text.js';

export type { JsonSchema } from './reference-tables.js';
export { referenceProblems, splitDescription } from './reference-text.js';

/** Where the generated reference lives, relative to the repository root. */
export const CONFIG_REFERENCE_PATH = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

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
const SAFETY_KEYS = ['effectWatch', ...LOOP_MONITORS.map((monitor) => monitor.key), 'interlocks'];

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
