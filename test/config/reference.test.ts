/** docs/configuration.md: generated from the schema, complete, in sync, and readable on GitHub. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { configJsonSchema } from '../../src/config/emit-json-schema.js';
import {
  CONFIG_REFERENCE_PATH,
  configReference,
  type JsonSchema,
  referenceProblems,
  splitDescription,
} from '../../src/config/reference.js';
import { ACTUATOR_KINDS, SENSOR_KINDS } from '../../src/kinds/registry.js';

const schema = configJsonSchema() as JsonSchema;
const page = configReference(schema);

describe('docs/configuration.md', () => {
  test('equals the page generated from the schema (run `npm run schema` after changing a description)', () => {
    const committed = readFileSync(CONFIG_REFERENCE_PATH, 'utf8');
    assert.ok(
      committed === page,
      'docs/configuration.md is out of date: run `npm run schema` and commit the result',
    );
  });

  test('every key says what it means and what it defaults to (the list names the keys to fix)', () => {
    assert.deepEqual(referenceProblems(schema), []);
  });

  test('has a section for every sensor and actuator kind, the Pi drivers included', () => {
    const kinds: string[] = [...SENSOR_KINDS, ...ACTUATOR_KINDS].map((kind) => kind.kind);
    for (const kind of ['ds18b20', 'gpio_input', 'pulse_rate', 'file_value', 'gpio_relay']) {
      assert.ok(kinds.includes(kind), kind);
    }
    const missing = kinds.filter((kind) => !page.includes(`\n### \`kind: ${kind}\`\n`));
    assert.deepEqual(missing, []);
  });

  test('has a row for every key of the schema', () => {
    const missing = keysOf(schema).filter((key) => !page.includes(`| \`${key}\``));
    assert.deepEqual(missing, []);
  });

  test('every link inside the page leads to a heading', () => {
    const anchors = headingAnchors(page);
    const links = [...page.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!);
    assert.ok(links.length > 20, `only ${links.length} links`);
    assert.deepEqual(
      links.filter((link) => !anchors.has(link)),
      [],
    );
  });

  test('every link to a file of the repository leads to one', () => {
    const files = [...page.matchAll(/\]\((\.\.\/[^)#]+)\)/g)].map((match) => match[1]!);
    assert.ok(files.length > 0);
    const docs = dirname(CONFIG_REFERENCE_PATH);
    assert.deepEqual(
      files.filter((file) => !existsSync(join(docs, file))),
      [],
    );
  });

  test('keeps <placeholders> visible: no raw < outside code (GitHub would drop it as HTML)', () => {
    const outsideCode = page
      .replace(/<!--[\s\S]*?-->/g, '')
      .split('\n')
      .map((line) => line.replace(/`[^`]*`/g, ''))
      .filter((line) => line.includes('<'));
    assert.deepEqual(outsideCode, []);
  });

  test('table rows have four cells (a | in a description is escaped)', () => {
    const bad = page
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .filter((line) => line.replace(/\\\|/g, '').split('|').length !== 6);
    assert.deepEqual(bad, []);
  });
});

describe('referenceProblems', () => {
  const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
    type: 'object',
    properties,
    required,
  });

  test('given a sound schema, finds nothing', () => {
    const sound = object(
      {
        a: { type: 'number', description: 'Seconds of a. Required.' },
        b: { type: 'number', default: 5, description: 'Seconds of b. Default 5.' },
        c: { type: 'number', default: 5 },
        d: { type: 'string', description: 'Name of d. Default: the id.' },
        old: { type: 'number', deprecated: true, description: 'Deprecated name of b.' },
      },
      ['a'],
    );
    // c: described nowhere, so one problem; everything else is fine.
    assert.deepEqual(referenceProblems(sound), ['c: no description of what it means']);
  });

  const cases: { when: string; key: JsonSchema; problem: string }[] = [
    { when: 'no description', key: { type: 'number', default: 1 }, problem: 'no description' },
    {
      when: 'only a default sentence',
      key: { default: 1, description: 'Default 1.' },
      problem: 'no description',
    },
    {
      when: 'optional, no default anywhere',
      key: { type: 'string', description: 'Name of it.' },
      problem: 'optional without a default',
    },
    {
      when: 'the stated default is not the schema default',
      key: { type: 'number', default: 600, description: 'Seconds. Default 60.' },
      problem: 'says "Default 60", its schema 600',
    },
  ];
  for (const { when, key, problem } of cases) {
    test(`given ${when}, names the key`, () => {
      const nested = { ...object({ k: key }), description: 'A nested block. Required.' };
      const found = referenceProblems(object({ nested }, ['nested']));
      assert.equal(found.length, 1, found.join('\n'));
      assert.match(found[0]!, /^nested\.k: /);
      assert.ok(found[0]!.includes(problem), found[0]);
    });
  }

  test('names the kinds of a union whose shared key lacks a description', () => {
    const kind = (name: string): JsonSchema => ({
      type: 'object',
      required: ['kind'],
      properties: {
        kind: { const: name, description: 'Kind. Required.' },
        shared: { type: 'number', default: 1 },
      },
    });
    const union = object({
      things: { type: 'object', additionalProperties: { oneOf: [kind('a'), kind('b')] } },
    });
    union.properties!.things!.description = 'Things by id. Default none.';
    assert.deepEqual(referenceProblems(union), [
      'things.<id>.shared: no description of what it means (kind: a, kind: b)',
    ]);
  });
});

describe('splitDescription', () => {
  const cases: [string, { meaning: string; stated?: string }][] = [
    ['Seconds between two reads. Default 10.', { meaning: 'Seconds between two reads.', stated: '10' }],
    [
      'Setpoint step (loop unit). Default 0.5 (temperature, generic), 1 (humidity).',
      { meaning: 'Setpoint step (loop unit).', stated: '0.5 (temperature, generic), 1 (humidity)' },
    ],
    [
      'Readings outside are faults. Default -55..125.',
      { meaning: 'Readings outside are faults.', stated: '-55..125' },
    ],
    [
      'Its directory, e.g. 28-0316a2795bff. Default: the only one.',
      { meaning: 'Its directory, e.g. 28-0316a2795bff.', stated: 'the only one' },
    ],
    [
      'Topics are <base>/<node.id>/… Default homeostat.',
      { meaning: 'Topics are <base>/<node.id>/…', stated: 'homeostat' },
    ],
    ['Config format version. Required: 1.', { meaning: 'Config format version.' }],
    ['Id of the sensor. Required.', { meaning: 'Id of the sensor.' }],
    ['Default: none; required with preset.', { meaning: '', stated: 'none; required with preset' }],
  ];
  for (const [description, expected] of cases) {
    test(JSON.stringify(description), () => assert.deepEqual(splitDescription(description), expected));
  }
});

/** Every property name in the schema (objects, records, lists, unions). */
function keysOf(node: JsonSchema | undefined): string[] {
  if (node === undefined) return [];
  return [
    ...Object.entries(node.properties ?? {}).flatMap(([key, child]) => [key, ...keysOf(child)]),
    ...(typeof node.additionalProperties === 'object' ? keysOf(node.additionalProperties) : []),
    ...keysOf(node.items),
    ...(node.oneOf ?? []).flatMap(keysOf),
  ];
}

/** The anchors GitHub gives the page's headings: lower case, punctuation dropped, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, text] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = text!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}
