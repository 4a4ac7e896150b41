/**
 * Writing the starter: a new file only, in a directory made if missing, with the install's modes,
 * durably (it survives a power cut right after init says it wrote it).
 */
import { constants } from 'node:fs';
import { access, chmod, type FileHandle, link, lstat, open, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fsyncDirectory } from '../durable-file.js';
import { makeDirs } from '../make-dirs.js';

/** Mode of the directories init creates (/etc/homeostat is 0750 root:homeostat once installed). */
export const CONFIG_DIR_MODE = 0o750;
/** Mode of the config: it may name password and token files, so not world-readable. */
export const CONFIG_FILE_MODE = 0o640;

/**
 * Whether anything (file, directory, even a dangling symlink) is seen at `path`. Any error
 * reads as "nothing": a parent that is not a directory or cannot be searched is reported by
 * {@link cannotCreate}, and the exclusive create would refuse an existing file anyway.
 */
export async function pathTaken(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Why `path` could not be created, or undefined when it can: its nearest existing ancestor must
 * be a directory this user may write. Checked before the questions, so nobody answers them for
 * a file that cannot be written; the write itself still reports what happens meanwhile.
 */
export async function cannotCreate(path: string): Promise<string | undefined> {
  let dir = dirname(path);
  for (;;) {
    let found: Awaited<ReturnType<typeof stat>> | undefined;
    try {
      found = await stat(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Missing, or under a file: look further up. Anything else (EACCES…) is the answer.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return `${dir}: ${(err as Error).message}`;
    }
    if (found) {
      if (!found.isDirectory()) return `${dir} is not a directory`;
      const writable = await access(dir, constants.W_OK).then(
        () => true,
        () => false,
      );
      return writable ? undefined : `${dir} is not writable by this user`;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** The calls {@link writeNewFile} makes on the file itself; tests pass failing or recording ones. */
export interface NewFileOps {
  open: (path: string, flags: 'wx', mode: number) => Promise<FileHandle>;
  unlink: (path: string) => Promise<void>;
  /** Gives the written file its name; fails with EEXIST when the name is taken. Default fs link. */
  link?: (existing: string, newPath: string) => Promise<void>;
  /** Flushes a directory's entries to disk; default fsyncDirectory. */
  syncDirectory?: (dir: string) => void;
}

const NODE_FILE_OPS: NewFileOps = { open, unlink };

/** Where the text is written before it gets its name: beside it, hidden, this process's own. */
export function pendingPathOf(path: string): string {
  return join(dirname(path), `.${basename(path)}.init-${process.pid}`);
}

/**
 * Creates `path` with `text`; fails with `EEXIST` when anything is there already. The text is
 * written to a pending file beside it ({@link pendingPathOf}), fsynced, and only then linked to
 * its name: `link` fails when the name is taken, so the check and the naming are one step and a
 * file appearing meanwhile is not overwritten; and a power cut during the write leaves no partial
 * config under the name (which the next init would refuse as existing), at most the pending file.
 * Missing parent directories are created {@link CONFIG_DIR_MODE} and the file is
 * {@link CONFIG_FILE_MODE}, set explicitly so the umask does not decide. Its directory (and each
 * directory made on the way, in its parent) is fsynced, so it is on disk when this resolves. When
 * anything fails, what this call made is removed again, so "nothing written" holds; directories
 * made on the way stay.
 */
export async function writeNewFile(
  path: string,
  text: string,
  ops: NewFileOps = NODE_FILE_OPS,
): Promise<void> {
  const parent = dirname(path);
  const created = await makeConfigDirs(parent);
  const pending = pendingPathOf(path);
  // One left by a cut before a reboot that reused this pid: no live process owns this name.
  await ops.unlink(pending).catch(() => undefined);
  const handle = await ops.open(pending, 'wx', CONFIG_FILE_MODE);
  let named = false;
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.chmod(CONFIG_FILE_MODE);
      await takeDirectoryGroup(handle, parent);
      // The data on disk before the name: a power cut must not leave an empty config behind.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await (ops.link ?? link)(pending, path);
    named = true;
    await ops.unlink(pending);
    // The name on disk, and those of the directories made for it (each lives in its parent):
    // without this a power cut right after "wrote …" can leave no file at all.
    const syncDirectory = ops.syncDirectory ?? fsyncDirectory;
    for (const dir of [parent, ...created.map((made) => dirname(made))]) syncDirectory(dir);
  } catch (error) {
    await removeOwnFiles(named ? [path, pending] : [pending], ops, error);
    throw error;
  }
}

/**
 * Removes what a failed {@link writeNewFile} made (safe: the exclusive create and the link made
 * them, nobody else's is lost); a file it cannot remove is named in `error`'s message.
 */
async function removeOwnFiles(paths: string[], ops: NewFileOps, error: unknown): Promise<void> {
  for (const own of paths) {
    await ops.unlink(own).catch((unlinkError: NodeJS.ErrnoException) => {
      if (unlinkError.code === 'ENOENT') return;
      const reason = unlinkError instanceof Error ? unlinkError.message : String(unlinkError);
      if (error instanceof Error) error.message += `; the partial ${own} is left (${reason}): remove it`;
    });
  }
}

/**
 * Makes `parent` and its missing ancestors {@link CONFIG_DIR_MODE}; returns the directories it
 * made, deepest first (their entries are to be fsynced in their parents).
 */
async function makeConfigDirs(parent: string): Promise<string[]> {
  const firstCreated = makeDirs(parent, CONFIG_DIR_MODE);
  if (firstCreated === undefined) return [];
  // mkdir returns the topmost directory it made; each one below it down to `parent` is new too.
  let dir = firstCreated;
  const made = [dir];
  await chmod(dir, CONFIG_DIR_MODE);
  for (const part of relative(firstCreated, parent).split(sep).filter(Boolean)) {
    dir = `${dir}${sep}${part}`;
    made.push(dir);
    await chmod(dir, CONFIG_DIR_MODE);
  }
  return made.reverse();
}

/**
 * The new file takes its directory's group, as in a setgid directory: written by root into an
 * installed /etc/homeostat (root:homeostat 0750), the daemon's group can then read it. Only
 * where allowed (root, or a member of that group); otherwise the file keeps the creator's group.
 */
async function takeDirectoryGroup(handle: FileHandle, dir: string): Promise<void> {
  const [file, parent] = await Promise.all([handle.stat(), stat(dir)]);
  if (file.gid === parent.gid) return;
  await handle.chown(file.uid, parent.gid).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPERM') throw err;
  });
}
