import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * Calls `onChange` after the config file changed and stayed quiet for `debounceMs` (editors
 * write in several steps, or replace the file by renaming: the directory is watched, not the
 * inode). Real time on purpose: file edits happen in the real world, whatever the clock speed.
 */
export class ConfigWatcher {
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly filePath: string,
    private readonly onChange: () => void,
    private readonly logger: Logger,
    private readonly debounceMs = 1_000,
  ) {}

  start(): void {
    const dir = path.dirname(path.resolve(this.filePath));
    const name = path.basename(this.filePath);
    try {
      this.watcher = fs.watch(dir, (_event, changed) => {
        if (changed !== null && changed.toString() !== name) return;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.onChange();
        }, this.debounceMs);
      });
      this.watcher.on('error', (error) =>
        this.logger.warn({ err: error }, 'config watch failed; SIGHUP still reloads'),
      );
    } catch (error) {
      this.logger.warn({ err: error, dir }, 'cannot watch the config directory; SIGHUP still reloads');
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.close();
  }
}
