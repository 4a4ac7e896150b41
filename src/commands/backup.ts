/**
 * `homeostat backup [FILE]`: one archive of what a node would lose with its SD card (the
 * database's desired state, tunings, profile progress, history and events, and the config),
 * taken while the daemon runs. `--dir DIR --keep N` is what the nightly timer runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { configFacts } from '../backup/config-files.js';
import { describeManifest, fileStamp } from '../backup/manifest.js';
import { writeBackup } from '../backup/write-archive.js';
import type { CliOutput } from './main.js';

export interface BackupCommandOptions {
  configPath: string;
  dbPath: string;
  file?: string | undefined;
  dir?: string | undefined;
  keep?: string | undefined;
  includeSecrets: boolean;
}

const ARCHIVE_NAME = /^homeostat-(.+)-(\d{8}T\d{6}Z)\.tar\.gz$/;

export async function backupCommand(options: BackupCommandOptions, output: CliOutput): Promise<number> {
  const { write, note } = output;
  const problem = usageProblem(options);
  if (problem) {
    note(`homeostat backup: ${problem}`);
    return 2;
  }
  const nowMs = Date.now();
  const nodeId = configFacts(options.configPath).nodeId ?? 'node';
  const archivePath = options.file ?? path.join(options.dir ?? '.', archiveName(nodeId, nowMs));
  if (fs.existsSync(archivePath)) {
    note(`homeostat backup: ${archivePath} exists; give another name (a backup never overwrites one)`);
    return 1;
  }
  try {
    if (options.dir !== undefined) fs.mkdirSync(options.dir, { recursive: true, mode: 0o750 });
    const { manifest, notes } = await writeBackup({
      dbPath: options.dbPath,
      configPath: options.configPath,
      archivePath,
      includeSecrets: options.includeSecrets,
      nowMs,
    });
    for (const line of notes) note(line);
    const size = sizeText(fs.statSync(archivePath).size);
    write(`backup written: ${archivePath} (${size}): ${describeManifest(manifest)}`);
    const secrets = manifest.files.filter((file) => file.name.startsWith('secrets/')).length;
    write(
      manifest.includesSecrets
        ? `  it holds ${secrets} secret file(s): keep it as safe as they are`
        : '  secret files not included (--include-secrets takes the files the config names)',
    );
    if (options.dir !== undefined && options.keep !== undefined) {
      for (const removed of pruneArchives(options.dir, nodeId, Number(options.keep))) {
        write(`  removed the older ${removed}`);
      }
    }
    return 0;
  } catch (err) {
    note(`homeostat backup: ${(err as Error).message}`);
    return 1;
  }
}

function usageProblem(options: BackupCommandOptions): string | undefined {
  if (options.file !== undefined && options.dir !== undefined) return 'give FILE or --dir, not both';
  if (options.keep !== undefined && options.dir === undefined) return '--keep needs --dir';
  if (options.keep !== undefined && !/^[1-9][0-9]{0,3}$/.test(options.keep)) {
    return `--keep must be a whole number from 1 to 9999, got "${options.keep}"`;
  }
  return undefined;
}

/** 12 kB, 3.4 MB: a size a person reads at a glance. */
export function sizeText(bytes: number): string {
  return bytes < 1e6 ? `${Math.max(1, Math.round(bytes / 1e3))} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `homeostat-<node>-<UTC time>.tar.gz`: sorts by time, and says whose it is. */
export function archiveName(nodeId: string, nowMs: number): string {
  return `homeostat-${nameOfNode(nodeId)}-${fileStamp(nowMs)}.tar.gz`;
}

/** The node's id as it can stand in a file name. */
function nameOfNode(nodeId: string): string {
  return nodeId.replace(/[^a-z0-9_-]/gi, '-');
}

/** Deletes this node's archives in `dir` beyond the newest `keep`; returns their names. */
function pruneArchives(dir: string, nodeId: string, keep: number): string[] {
  const ours = fs
    .readdirSync(dir)
    .filter((name) => ARCHIVE_NAME.exec(name)?.[1] === nameOfNode(nodeId))
    .sort();
  const old = ours.slice(0, Math.max(0, ours.length - keep));
  for (const name of old) fs.rmSync(path.join(dir, name), { force: true });
  return old;
}
