/**
 * The config watcher on real files in a temp dir (fs.watch). Each test waits for the callback
 * (up to 5 s, generous for a loaded machine); nothing asserts on timing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import pino from 'pino';
import { ConfigWatcher } from '../../src/runtime/config-watcher.js';

const silent = pino({ level: 'silent' });
let watcher: ConfigWatcher | undefined;
afterEach(() => watcher?.stop());

/** Starts a watcher on `file` and returns a function that resolves on the next reload. */
function watch(file: string) {
  let waiting: (() => void) | undefined;
  let count = 0;
  watcher = new ConfigWatcher(
    file,
    () => {
      count++;
      waiting?.();
    },
    silent,
    50,
  );
  watcher.start();
  const nextReload = (what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reload after ${what}`)), 5_000);
      waiting = () => {
        clearTimeout(timer);
        waiting = undefined;
        resolve();
      };
    });
  return { nextReload, count: () => count };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('ConfigWatcher', () => {
  test('a plain file: an edit reloads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-watch-'));
    writeFileSync(join(dir, 'config.yaml'), 'a');
    const { nextReload, count } = watch(join(dir, 'config.yaml'));
    await settle();
    const reloaded = nextReload('editing the file');
    writeFileSync(join(dir, 'config.yaml'), 'b');
    await reloaded;
    assert.ok(count() >= 1);
  });

  test('given a config that is a symlink to a file elsewhere, when the target is edited, then it reloads', async () => {
    const root = mkdtempSync(join(tmpdir(), 'homeostat-watch-'));
    mkdirSync(join(root, 'etc'));
    mkdirSync(join(root, 'srv'));
    writeFileSync(join(root, 'srv/real.yaml'), 'a');
    symlinkSync(join(root, 'srv/real.yaml'), join(root, 'etc/config.yaml'));
    const { nextReload } = watch(join(root, 'etc/config.yaml'));
    await settle();
    const reloaded = nextReload('editing the target');
    writeFileSync(join(root, 'srv/real.yaml'), 'b');
    await reloaded;
  });

  test('when the link is retargeted, then it reloads, and edits of the new target reload too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'homeostat-watch-'));
    mkdirSync(join(root, 'etc'));
    mkdirSync(join(root, 'v1'));
    mkdirSync(join(root, 'v2'));
    writeFileSync(join(root, 'v1/config.yaml'), 'a');
    writeFileSync(join(root, 'v2/config.yaml'), 'b');
    const link = join(root, 'etc/config.yaml');
    symlinkSync(join(root, 'v1/config.yaml'), link);
    const { nextReload } = watch(link);
    await settle();
    let reloaded = nextReload('retargeting the link');
    // ln -sfn: a new link renamed over the old one.
    symlinkSync(join(root, 'v2/config.yaml'), `${link}.tmp`);
    renameSync(`${link}.tmp`, link);
    await reloaded;
    await settle();
    reloaded = nextReload('editing the new target');
    writeFileSync(join(root, 'v2/config.yaml'), 'c');
    await reloaded;
  });

  test('a Kubernetes ConfigMap update (..data swapped to a new directory) reloads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-watch-'));
    mkdirSync(join(dir, '..2026_01_01'));
    writeFileSync(join(dir, '..2026_01_01/config.yaml'), 'a');
    symlinkSync('..2026_01_01', join(dir, '..data'));
    symlinkSync('..data/config.yaml', join(dir, 'config.yaml'));
    const { nextReload } = watch(join(dir, 'config.yaml'));
    await settle();
    const reloaded = nextReload('swapping ..data');
    mkdirSync(join(dir, '..2026_01_02'));
    writeFileSync(join(dir, '..2026_01_02/config.yaml'), 'b');
    symlinkSync('..2026_01_02', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..2026_01_01'), { recursive: true });
    await reloaded;
  });
});
