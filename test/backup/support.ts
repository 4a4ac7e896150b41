/** A node's files as a backup finds them: a database with desired state, a config, secrets. */
import fs from 'node:fs';
import path from 'node:path';
import { restoreBackup } from '../../src/backup/restore.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { silentLogger } from '../support/logger.js';

export const NOW_MS = Date.parse('2026-12-04T03:00:00Z');

export interface NodeFiles {
  dir: string;
  dbPath: string;
  configPath: string;
  passwordFile: string;
  tokenFile: string;
}

/**
 * In `dir`: var/homeostat.db with loops cellar (generation 1) and room (a runtime setpoint
 * 21.5, generation 2), etc/config.yaml naming two secret files (0600 and 0640).
 */
export function nodeFiles(dir: string): NodeFiles {
  const files = {
    dir,
    dbPath: path.join(dir, 'var', 'homeostat.db'),
    configPath: path.join(dir, 'etc', 'config.yaml'),
    passwordFile: path.join(dir, 'etc', 'mqtt-password'),
    tokenFile: path.join(dir, 'etc', 'api-token'),
  };
  fs.mkdirSync(path.join(dir, 'etc'));
  fs.writeFileSync(files.passwordFile, 'broker-secret\n', { mode: 0o600 });
  fs.writeFileSync(files.tokenFile, 'api-secret\n', { mode: 0o640 });
  fs.chmodSync(files.tokenFile, 0o640);
  fs.writeFileSync(
    files.configPath,
    [
      'node:',
      '  id: cellar',
      'mqtt:',
      `  passwordFile: ${files.passwordFile}`,
      'http:',
      `  tokenFile: ${files.tokenFile}`,
      '',
    ].join('\n'),
  );
  const { db } = openStore({ path: files.dbPath, logger: silentLogger, nowMs: () => NOW_MS });
  const store = new DesiredStore(db, () => NOW_MS);
  store.applyConfig({
    text: fs.readFileSync(files.configPath, 'utf8'),
    loops: {
      cellar: { setpoint: 12, mode: 'heat', sectionHash: sha256('cellar') },
      room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room') },
    },
  });
  store.setDesired('room', { setpoint: 21.5 }, 'cli', 'req-1');
  closeStore(db);
  return files;
}

/** The desired state and events of a database file, to compare before and after. */
export function contentOf(dbPath: string): { desired: unknown; generation: number; events: number } {
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: () => NOW_MS });
  try {
    const store = new DesiredStore(db, () => NOW_MS);
    return {
      desired: store.allDesired(),
      generation: store.highestGeneration(),
      events: store.events({}).length,
    };
  } finally {
    closeStore(db);
  }
}

/** `homeostat restore ARCHIVE` onto the node's own database and config (as after a reinstall). */
export function restoreOnto(node: NodeFiles, archivePath: string, databaseOnly = false): Promise<string[]> {
  return restoreBackup({
    archivePath,
    dbPath: node.dbPath,
    configPath: node.configPath,
    databaseOnly,
    nowMs: NOW_MS,
  });
}
