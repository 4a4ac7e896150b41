/**
 * `homeostat restore FILE`: a backup archive (or the database copy the daemon keeps before a
 * schema migration) put back in place. Refused while a daemon runs on the database.
 */
import { restoreBackup } from '../backup/restore.js';
import type { CliOutput } from './main.js';

export interface RestoreCommandOptions {
  configPath: string;
  dbPath: string;
  file?: string | undefined;
  databaseOnly: boolean;
}

export async function restoreCommand(options: RestoreCommandOptions, output: CliOutput): Promise<number> {
  const { write, note } = output;
  if (options.file === undefined) {
    note(
      'homeostat restore: name the backup, e.g. homeostat restore homeostat-cellar-20261204T030000Z.tar.gz',
    );
    return 2;
  }
  try {
    const lines = await restoreBackup({
      archivePath: options.file,
      dbPath: options.dbPath,
      configPath: options.configPath,
      databaseOnly: options.databaseOnly,
      nowMs: Date.now(),
    });
    for (const line of lines) write(line);
    write(
      'restored: start the daemon (sudo systemctl start homeostat); it goes on from the restored generations',
    );
    return 0;
  } catch (err) {
    // A daemon on the database (DatabaseLockedError), a bad archive (BadBackupError) or the
    // filesystem: each message names the file and the fix. Nothing was moved before it.
    note(`homeostat restore: ${(err as Error).message}`);
    return 1;
  }
}
