/**
 * Writes the two files generated from the zod schema:
 * - `config/homeostat.schema.json`, so editors (VS Code with the YAML extension, anything on
 *   yaml-language-server) complete and check config files that start with
 *   `# yaml-language-server: $schema=./homeostat.schema.json`;
 * - `docs/configuration.md`, the configuration reference (reference.ts).
 *
 * Run: `npm run schema` (= `node --import tsx src/config/emit-json-schema.ts`).
 * Tests check the committed files equal `configJsonSchema()` (as parsed JSON, so formatting
 * does not matter) and `configReference(configJsonSchema())`, so neither can drift.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { CONFIG_REFERENCE_PATH, configReference } from './reference.js';
import { configSchema } from './schema.js';

/** Where the generated schema lives, relative to the repository root. */
export const CONFIG_JSON_SCHEMA_PATH = fileURLToPath(
  new URL('../../config/homeostat.schema.json', import.meta.url),
);

/**
 * The JSON Schema of the config file *as written* (`io: 'input'`: fields with defaults are
 * optional, defaults and descriptions included). Draft-07 because it is the draft editors'
 * YAML tooling supports best.
 */
export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(configSchema, { io: 'input', target: 'draft-07' }),
    title: 'homeostat configuration',
  };
}

/** Writes the file, then lets biome format it so `npm run lint` stays clean. */
export function writeConfigJsonSchema(path = CONFIG_JSON_SCHEMA_PATH): void {
  writeFileSync(path, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
  const biome = fileURLToPath(new URL('../../node_modules/.bin/biome', import.meta.url));
  if (existsSync(biome)) execFileSync(biome, ['format', '--write', path], { stdio: 'ignore' });
}

/** Writes the configuration reference (markdown, from the same JSON Schema). */
export function writeConfigReference(path = CONFIG_REFERENCE_PATH): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, configReference(configJsonSchema()));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeConfigJsonSchema();
  console.log(`wrote ${CONFIG_JSON_SCHEMA_PATH}`);
  writeConfigReference();
  console.log(`wrote ${CONFIG_REFERENCE_PATH}`);
}
