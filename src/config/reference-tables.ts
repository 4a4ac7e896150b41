/**
 * The configuration reference's model: the config's JSON Schema walked into tables, one per
 * object (a block, a kind, a nested object), each row one key (reference.ts renders them).
 */

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
  /** `email` for an e-mail address (its pattern is too long to be worth showing). */
  format?: string;
}

/** One table of the page: the keys of one object (a block, a kind, a nested object). */
export interface Table {
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

export interface Row {
  path: string;
  /** The union variant the row belongs to (`kind: ds18b20`), if any. */
  variant?: string;
  key: string;
  schema: JsonSchema;
  required: boolean;
  /** The table documenting this key's object, if it is one (or holds them). */
  child?: Table;
}

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
export function tablesOf(
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

/** Every row of every table, depth-first. */
export function rowsOf(tables: Table[]): Row[] {
  return tables.flatMap((table) => table.rows);
}
