import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CONFIG_JSON_SCHEMA_PATH, configJsonSchema } from '../../src/config/emit-json-schema.js';

type Node = Record<string, unknown>;

/** Every `properties` entry of the schema, with its dotted path. */
function* properties(node: unknown, path: string): Generator<[string, Node]> {
  if (typeof node !== 'object' || node === null) return;
  const n = node as Node;
  for (const [key, child] of Object.entries((n.properties as Record<string, Node> | undefined) ?? {})) {
    yield [`${path}.${key}`, child];
    yield* properties(child, `${path}.${key}`);
  }
  yield* properties(n.additionalProperties, `${path}.*`);
  yield* properties(n.items, `${path}[]`);
  for (const option of (n.oneOf as unknown[] | undefined) ?? []) yield* properties(option, path);
}

describe('config/homeostat.schema.json', () => {
  test('equals configJsonSchema() (run `npm run schema` after changing src/config/schema.ts)', () => {
    const committed = JSON.parse(readFileSync(CONFIG_JSON_SCHEMA_PATH, 'utf8'));
    assert.deepEqual(committed, configJsonSchema());
  });

  test('describes every field, so editors can explain it', () => {
    const undescribed = [...properties(configJsonSchema(), '$')]
      .filter(([, schema]) => typeof schema.description !== 'string' || schema.description === '')
      .map(([path]) => path);
    assert.deepEqual(undescribed, []);
  });

  test('rejects unknown keys (additionalProperties false) at the top and in loops', () => {
    const schema = configJsonSchema() as {
      additionalProperties: unknown;
      properties: { loops: { additionalProperties: { additionalProperties: unknown } } };
    };
    assert.equal(schema.additionalProperties, false);
    assert.equal(schema.properties.loops.additionalProperties.additionalProperties, false);
  });

  test('shows defaults to editors', () => {
    const schema = configJsonSchema() as {
      properties: { loops: { additionalProperties: { properties: { changeoverS: { default: unknown } } } } };
    };
    assert.equal(schema.properties.loops.additionalProperties.properties.changeoverS.default, 300);
  });
});
