import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The power-cut filesystem (lazyfs.py, a FUSE passthrough that keeps only what was fsynced)
 * driven from a test: `mount` starts it, `cut` is the power cut (unmount: every write not
 * fsynced is gone at the next mount), and the next `mount` of the same state directory is the
 * power coming back. Needs root, /dev/fuse and Debian's python3-fusepy (fuse3 for the kernel
 * side's helpers): `lazyFsUnavailable` says which is missing.
 */

const SCRIPT = fileURLToPath(new URL('./lazyfs.py', import.meta.url));
/** Debian's python, which sees python3-fusepy (a pyenv or venv python on PATH may not). */
const PYTHONS = ['/usr/bin/python3', 'python3'];
const MOUNT_TIMEOUT_MS = 10_000;
const UNMOUNT_TIMEOUT_MS = 10_000;

/** What lazyfs.py counted over one mount (from power on to the cut). */
export interface LazyFsCounts {
  fsyncs: number;
  dirFsyncs: number;
  bytesWritten: number;
  bytesSynced: number;
}

let python: string | undefined;

/** Why the power-cut filesystem cannot run here, or undefined when it can. */
export function lazyFsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (to mount a FUSE filesystem)';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse';
  python = PYTHONS.find(
    (candidate) =>
      spawnSync(candidate, ['-c', 'import fusepy'], { stdio: 'ignore' }).status === 0 ||
      spawnSync(candidate, ['-c', 'import fuse; fuse.FUSE'], { stdio: 'ignore' }).status === 0,
  );
  if (python === undefined) return 'no python3 with fusepy (Debian: apt-get install fuse3 python3-fusepy)';
  return undefined;
}

export class LazyFs {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly mountDir: string,
    private readonly exited: Promise<void>,
  ) {}

  /**
   * Mounts `stateDir`'s filesystem at `mountDir` (both existing directories) and resolves once
   * the kernel has it; rejects with lazyfs.py's output when it does not within 10 s.
   */
  static async mount(stateDir: string, mountDir: string): Promise<LazyFs> {
    if (python === undefined && lazyFsUnavailable() !== undefined) throw new Error('lazyfs cannot run here');
    const child = spawn(python!, [SCRIPT, stateDir, mountDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const fs = new LazyFs(child, mountDir, exited);
    const onData = (chunk: Buffer) => {
      fs.output += chunk.toString('utf8');
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const deadline = Date.now() + MOUNT_TIMEOUT_MS;
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    while (!/^mounted$/m.test(fs.output)) {
      if (gone || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`lazyfs did not mount ${mountDir}:\n${fs.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return fs;
  }

  /**
   * The power cut: unmounts (every process using the mount must be dead: kill them first) and
   * resolves with what this mount counted. What was not fsynced is gone at the next mount.
   */
  async cut(): Promise<LazyFsCounts> {
    const deadline = Date.now() + UNMOUNT_TIMEOUT_MS;
    for (;;) {
      const umount = spawnSync('umount', [this.mountDir], { encoding: 'utf8' });
      if (umount.status === 0) break;
      if (Date.now() > deadline) {
        // Still busy: detach it and end the filesystem, so the test can go on and say so.
        spawnSync('umount', ['-l', this.mountDir]);
        this.child.kill('SIGKILL');
        await this.exited;
        throw new Error(`umount ${this.mountDir} failed: ${umount.stderr.trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.exited;
    const line = this.output
      .split('\n')
      .reverse()
      .find((l) => l.startsWith('{'));
    if (line === undefined) throw new Error(`lazyfs printed no counts:\n${this.output}`);
    return JSON.parse(line) as LazyFsCounts;
  }

  /** For after hooks: unmounts whatever state it is in, never throws. */
  async dispose(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    spawnSync('umount', ['-l', this.mountDir]);
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
