/**
 * Writes `config/homeostat.schema.json` from the zod schema, so editors (VS Code with the
 * YAML extension, anything on yaml-language-server) complete and check config files that
 * start with `# yaml-language-server: $schema=./homeostat.schema.json`.
 *
 * Run: `npm run schema` (= `node --import tsx src/config/emit-json-schema.ts`).
 * A test checks the committed file equals `configJsonSchema()` (as parsed JSON, so
 * formatting does not matter), so it cannot drift.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
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

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeConfigJsonSchema();
  console.log(`wrote ${CONFIG_JSON_SCHEMA_PATH}`);
}
