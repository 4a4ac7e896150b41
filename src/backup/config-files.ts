/**
 * What a backup takes from the config file: its text, the node's id, and the files it names
 * (`passwordFile`, `tokenFile`, `keyFile`, `caFile`…: secrets and certificates, taken only with
 * --include-secrets). Read from the YAML alone, not validated: a config that fails validation
 * is exactly one worth backing up before fixing it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { readCappedFile } from '../capped-file.js';
import { MAX_CONFIG_BYTES } from '../config/load.js';

export interface ConfigFacts {
  text?: string;
  nodeId?: string;
  /** Absolute paths, each once, in the order the config names them. */
  secretFiles: string[];
  notes: string[];
}

export function configFacts(configPath: string): ConfigFacts {
  if (!fs.existsSync(configPath)) {
    return { secretFiles: [], notes: [`no config at ${configPath}: the archive holds the database alone`] };
  }
  const text = readCappedFile(configPath, 'config', MAX_CONFIG_BYTES).toString('utf8');
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    return {
      text,
      secretFiles: [],
      notes: [`config ${configPath} is not YAML (${why}): its files are not known`],
    };
  }
  const node = (doc as { node?: { id?: unknown } } | null)?.node;
  const nodeId = typeof node?.id === 'string' ? node.id : undefined;
  const secretFiles = [...new Set(namedFiles(doc).map((file) => path.resolve(file)))];
  return { text, ...(nodeId === undefined ? {} : { nodeId }), secretFiles, notes: [] };
}

/** Every string under a key ending in `File`, anywhere in the document. */
function namedFiles(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(namedFiles);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key.endsWith('File') && typeof inner === 'string' ? [inner] : namedFiles(inner),
  );
}
