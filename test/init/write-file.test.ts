/**
 * writeNewFile when a step after the exclusive create fails (a full disk, a failed chmod or
 * chown, a failed close): the file it made is removed and the error passes through, so init's
 * "nothing written" is true and the next init is not refused with "exists".
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type NewFileOps, pendingPathOf, writeNewFile } from '../../src/init/write-file.js';
import { tempDir } from '../support/tmp.js';

const TEXT = 'node:\n  id: raspberrypi\n';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected`), { code });
}

/** The real open, its handle with `override`'s methods in place of the real ones. */
function openWith(override: (real: FileHandle) => Partial<FileHandle>): NewFileOps['open'] {
  return async (path, flags, mode) => {
    const real = await open(path, flags, mode);
    const replaced = override(real);
    return new Proxy(real, {
      get: (target, key) => {
        if (key in replaced) return replaced[key as keyof FileHandle];
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}

const failures: { when: string; open: NewFileOps['open'] }[] = [
  {
    when: 'the write stops half-way (ENOSPC)',
    open: openWith((real) => ({
      writeFile: async (data: unknown) => {
        await real.write(String(data).slice(0, 10));
        throw errno('ENOSPC');
      },
    })),
  },
  {
    when: 'chmod fails',
    open: openWith(() => ({
      chmod: async () => {
        throw errno('EIO');
      },
    })),
  },
  {
    when: 'taking the directory group fails (chown EIO)',
    open: openWith((real) => ({
      stat: (async () => ({ ...(await real.stat()), gid: -2 })) as FileHandle['stat'],
      chown: async () => {
        throw errno('EIO');
      },
    })),
  },
  {
    when: 'close fails (a deferred write error)',
    open: openWith((real) => ({
      close: async () => {
        await real.close();
        throw errno('EIO');
      },
    })),
  },
];

describe('writeNewFile: a failure after the create leaves no file', () => {
  for (const failure of failures) {
    test(`given ${failure.when}, then it rejects with that error, no file, and a retry writes it`, async (t) => {
      const path = join(tempDir(t, 'homeostat-write-'), 'etc', 'config.yaml');
      await assert.rejects(writeNewFile(path, TEXT, { open: failure.open, unlink }), /injected/);
      assert.equal(existsSync(path), false, 'the partial file was removed');
      await writeNewFile(path, TEXT);
      assert.equal(readFileSync(path, 'utf8'), TEXT);
    });
  }

  test('given the removal fails too, then the error names the pending file left, and the config name stays free', async (t) => {
    const path = join(tempDir(t, 'homeostat-write-'), 'config.yaml');
    const ops: NewFileOps = {
      open: failures[0]!.open,
      unlink: async () => {
        throw errno('EROFS');
      },
    };
    await assert.rejects(writeNewFile(path, TEXT, ops), (error: NodeJS.ErrnoException) => {
      assert.equal(error.code, 'ENOSPC');
      assert.match(
        error.message,
        /^ENOSPC: injected; the partial .*\.config\.yaml\.init-\d+ is left \(EROFS: injected\): remove it$/,
      );
      return true;
    });
    // Before, the partial file was the config itself, and the next init refused it as existing.
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(pendingPathOf(path)), true);
  });

  test('given the file exists, then EEXIST and the existing file is neither changed nor removed', async (t) => {
    const path = join(tempDir(t, 'homeostat-write-'), 'config.yaml');
    await writeNewFile(path, 'mine\n');
    await assert.rejects(writeNewFile(path, TEXT), { code: 'EEXIST' });
    assert.equal(readFileSync(path, 'utf8'), 'mine\n');
    assert.equal(existsSync(pendingPathOf(path)), false, 'the pending file is removed');
  });

  test('given the name is taken while the text is written, then EEXIST and that file is kept', async (t) => {
    const path = join(tempDir(t, 'homeostat-write-'), 'config.yaml');
    const ops: NewFileOps = {
      open: openWith((real) => ({
        sync: async () => {
          await real.sync();
          writeFileSync(path, 'theirs\n');
        },
      })),
      unlink,
    };
    await assert.rejects(writeNewFile(path, TEXT, ops), { code: 'EEXIST' });
    assert.equal(readFileSync(path, 'utf8'), 'theirs\n');
    assert.equal(existsSync(pendingPathOf(path)), false);
  });

  test('given a power cut during the write (the process gone before the link), then no config is under the name', async (t) => {
    const path = join(tempDir(t, 'homeostat-write-'), 'config.yaml');
    const cut = new Error('power cut');
    const ops: NewFileOps = {
      open: openWith((real) => ({
        writeFile: async (data: unknown) => {
          await real.write(String(data).slice(0, 10));
          throw cut;
        },
      })),
      // The process is gone: nothing it would do afterwards happens.
      unlink: async () => {
        throw cut;
      },
    };
    await assert.rejects(writeNewFile(path, TEXT, ops));
    assert.equal(existsSync(path), false, 'the next init is not refused by a partial config');
    // After the reboot, init may get the same pid (pids restart at boot): its pending file is stale.
    assert.equal(existsSync(pendingPathOf(path)), true);
    await writeNewFile(path, TEXT);
    assert.equal(readFileSync(path, 'utf8'), TEXT);
  });
});

describe('writeNewFile: on disk when it resolves (a power cut right after leaves the file complete)', () => {
  /** The real calls, recorded in order: the handle's writeFile, sync and close, each directory synced. */
  function recording(calls: string[]): NewFileOps {
    return {
      open: openWith((real) => ({
        writeFile: async (data: unknown) => {
          calls.push('writeFile');
          await real.writeFile(String(data), 'utf8');
        },
        sync: async () => {
          calls.push('sync');
          await real.sync();
        },
        close: async () => {
          calls.push('close');
          await real.close();
        },
      })),
      unlink,
      syncDirectory: (dir) => calls.push(`syncDirectory ${dir}`),
    };
  }

  test('given an existing directory, then the data is fsynced before close, then the directory', async (t) => {
    const dir = tempDir(t, 'homeostat-write-');
    const calls: string[] = [];
    await writeNewFile(join(dir, 'config.yaml'), TEXT, recording(calls));
    assert.deepEqual(calls, ['writeFile', 'sync', 'close', `syncDirectory ${dir}`]);
  });

  test('given missing directories, then each new entry is fsynced in its parent, deepest first', async (t) => {
    const dir = tempDir(t, 'homeostat-write-');
    const calls: string[] = [];
    await writeNewFile(join(dir, 'etc', 'homeostat', 'config.yaml'), TEXT, recording(calls));
    assert.deepEqual(calls.slice(3), [
      `syncDirectory ${join(dir, 'etc', 'homeostat')}`,
      `syncDirectory ${join(dir, 'etc')}`,
      `syncDirectory ${dir}`,
    ]);
  });

  test('given the directory fsync fails, then it rejects with that error and leaves no file', async (t) => {
    const path = join(tempDir(t, 'homeostat-write-'), 'config.yaml');
    const ops: NewFileOps = {
      open,
      unlink,
      syncDirectory: () => {
        throw errno('EIO');
      },
    };
    await assert.rejects(writeNewFile(path, TEXT, ops), { code: 'EIO' });
    assert.equal(existsSync(path), false);
  });
});
