import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * Calls `onChange` after the config file changed and stayed quiet for `debounceMs` (editors
 * write in several steps, or replace the file by renaming: directories are watched, not
 * inodes). Real time on purpose: file edits happen in the real world, whatever the clock speed.
 *
 * A config that is a symlink (`/etc/homeostat/config.yaml` → a file elsewhere; a Kubernetes
 * ConfigMap, where `config.yaml` → `..data/config.yaml` and `..data` is swapped to a new
 * directory on every update) is watched through the link: the directory of the file it
 * resolves to (edits of the target), and every change in the link's own directory (the link
 * retargeted, `..data` swapped). The link is resolved again after each change.
 */
export class ConfigWatcher {
  private watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private target: string | undefined;
  private stopped = false;

  constructor(
    private readonly filePath: string,
    private readonly onChange: () => void,
    private readonly logger: Logger,
    private readonly debounceMs = 1_000,
  ) {}

  start(): void {
    this.stopped = false;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.closeWatchers();
  }

  /** Watches the path's directory and, through a symlink, its target's directory. */
  private arm(): void {
    this.closeWatchers();
    const absolute = path.resolve(this.filePath);
    this.target = resolveTarget(absolute);
    const throughLink = this.target !== undefined && this.target !== absolute;
    // Through a link, any change next to it may retarget it (`..data` swapped): not filtered.
    this.watch(path.dirname(absolute), throughLink ? undefined : path.basename(absolute));
    if (throughLink && this.target !== undefined) {
      this.watch(path.dirname(this.target), path.basename(this.target));
    }
  }

  private watch(dir: string, name: string | undefined): void {
    try {
      const watcher = fs.watch(dir, (_event, changed) => {
        if (name !== undefined && changed !== null && changed.toString() !== name) return;
        this.changed();
      });
      watcher.on('error', (error) =>
        this.logger.warn({ err: error, dir }, 'config watch failed; SIGHUP still reloads'),
      );
      this.watchers.push(watcher);
    } catch (error) {
      this.logger.warn({ err: error, dir }, 'cannot watch the config directory; SIGHUP still reloads');
    }
  }

  private changed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      // The link may point elsewhere now: follow it before the next edit.
      if (resolveTarget(path.resolve(this.filePath)) !== this.target) this.arm();
      this.onChange();
    }, this.debounceMs);
  }

  private closeWatchers(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }
}

/** The file a path resolves to through every symlink; undefined while it does not exist. */
function resolveTarget(absolute: string): string | undefined {
  try {
    return fs.realpathSync(absolute);
  } catch {
    return undefined;
  }
}
