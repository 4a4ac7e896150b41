/**
 * `homeostat run` with its database on a full disk (issue 8), as a real process. Before: exit 1
 * before any loop ran. Now: it regulates, says "disk full" once, and stops cleanly (exit 0).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { DEMO_CONFIG_PATH, killAll, startDaemon } from '../integration/helpers.js';
import { fillUp, smallFilesystem } from './support.js';

after(killAll);

test('given a full disk, when homeostat run starts, then it regulates every loop and says disk full once', async (t) => {
  const fsys = smallFilesystem(128);
  if ('skip' in fsys) return t.skip(fsys.skip);
  try {
    fillUp(fsys.dir);
    const daemon = startDaemon({ configPath: DEMO_CONFIG_PATH, dbPath: path.join(fsys.dir, 'state.db') });
    await daemon.waitForLine(/^homeostat regulating 3 loop\(s\)/);
    // Every loop acts (the demo's heater, cooler and fogger all start from far off).
    for (const actuator of ['room_heater', 'chamber_cooler', 'fogger']) {
      await daemon.waitForLine((line) => line.actuator === actuator);
    }
    const errors = daemon.filter((line) => line.level >= 50);
    assert.equal(errors.length, 1, daemon.output);
    assert.match(errors[0]!.msg, /^disk full: free space on the filesystem holding /);
    const exit = await daemon.kill('SIGTERM');
    assert.equal(exit.code, 0, daemon.output);
  } finally {
    fsys.unmount();
  }
});
