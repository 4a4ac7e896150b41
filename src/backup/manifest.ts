/**
 * What a backup archive holds, in its `manifest.json`: written by `homeostat backup`, checked
 * by `homeostat restore` before anything on the machine is touched. Versioned by `format`: a
 * restore refuses a format it does not know instead of guessing.
 */
import { z } from 'zod';

/** The archive layout this code writes and reads. */
export const BACKUP_FORMAT = 1;

/** The archive's members: the manifest, the database snapshot, the config, the secret files. */
export const MANIFEST_NAME = 'manifest.json';
export const DATABASE_NAME = 'homeostat.db';
export const CONFIG_NAME = 'config.yaml';
/** Secret files are stored as `secrets/1`, `secrets/2`…: their paths are in the manifest. */
export const SECRET_PREFIX = 'secrets/';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const memberName = z
  .string()
  .refine(
    (name) => name === DATABASE_NAME || name === CONFIG_NAME || /^secrets\/[1-9][0-9]{0,3}$/.test(name),
    'not a member a backup has',
  );

const fileEntry = z.object({
  name: memberName,
  bytes: z.number().int().nonnegative(),
  sha256: sha256Hex,
  /** Config and secrets: where the file was when the backup was taken (restored there). */
  path: z.string().min(1).optional(),
  /** Secrets: their mode, owner and group, restored as they were (owner and group as root only). */
  mode: z.number().int().min(0).max(0o7777).optional(),
  uid: z.number().int().nonnegative().optional(),
  gid: z.number().int().nonnegative().optional(),
});

export const manifestSchema = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  homeostatVersion: z.string(),
  /** The database snapshot's schema version (`PRAGMA user_version`). */
  schemaVersion: z.number().int().nonnegative(),
  createdAt: z.iso.datetime(),
  nodeId: z.string().optional(),
  /** The node's generation counter when the snapshot was taken. */
  lastGeneration: z.number().int().nonnegative(),
  /** Each loop's desired-state generation in the snapshot. */
  loops: z.record(z.string(), z.number().int().nonnegative()),
  /** Where the database was (restore's default target is the one given to it, not this). */
  databasePath: z.string(),
  includesSecrets: z.boolean(),
  files: z.array(fileEntry).min(1),
});

export type BackupManifest = z.infer<typeof manifestSchema>;
export type BackupFileEntry = z.infer<typeof fileEntry>;

/** `20261204T030000Z`: a UTC time for a file name (sorts by time, no colons). */
export function fileStamp(atMs: number): string {
  return new Date(atMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** The manifest's one-line summary, as backup and restore print it. */
export function describeManifest(manifest: BackupManifest): string {
  const loops = Object.keys(manifest.loops).length;
  const node = manifest.nodeId === undefined ? '' : `node ${manifest.nodeId}, `;
  return `${node}taken ${manifest.createdAt} by homeostat ${manifest.homeostatVersion}: schema ${manifest.schemaVersion}, generation ${manifest.lastGeneration}, ${loops} loop(s)`;
}
