/**
 * The configuration reference's text: descriptions split into meaning and default, types and
 * bounds as words, markdown escaping, and the problems a reader would hit (referenceProblems).
 */
import { type JsonSchema, type Row, rowsOf, type Table, tablesOf } from './reference-tables.js';

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

export function firstSentence(text: string): string {
  return text.split(SENTENCE_END)[0] ?? '';
}

/** A schema default as YAML would write it. */
export function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The default column's text (plain, unescaped), or undefined when the key states none. */
export function defaultText(row: Row): string | undefined {
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

export const code = (text: string) => `\`${text}\``;

/** The constants a schema allows, if it is a choice among constants. */
function choicesOf(schema: JsonSchema): unknown[] | undefined {
  if (schema.const !== undefined) return [schema.const];
  if (schema.enum !== undefined) return schema.enum;
  if (schema.anyOf?.every((option) => option.const !== undefined)) return schema.anyOf.map((o) => o.const);
  return undefined;
}

/** The type column (markdown): type, bounds, allowed values, a link to a nested table. */
export function typeText(schema: JsonSchema, link: (table: Table) => string, child?: Table): string {
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
  if (schema.anyOf !== undefined) return schema.anyOf.map((option) => typeText(option, link)).join(' or ');
  switch (schema.type) {
    case 'number':
    case 'integer':
      return `${schema.type}${boundsOf(schema)}`;
    case 'string': {
      if (schema.format === 'email') return 'e-mail address';
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
export function markdownText(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('|', '\\|')
    .replaceAll('*', '\\*')
    .replace(/\s*\n\s*/g, ' ');
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

/** The default column: required in bold, the schema's value in code with the description's words after it. */
export function defaultCell(row: Row): string {
  const text = defaultText(row);
  if (text === undefined) return '';
  if (row.required) return '**required**';
  const value = row.schema.default;
  if (value !== undefined && typeof value !== 'object' && text.startsWith(formatValue(value))) {
    return code(formatValue(value)) + markdownText(text.slice(formatValue(value).length));
  }
  return markdownText(text);
}
