/**
 * `homeostat run` with its database on a full disk, as a real process. Before: exit 1
 * before any loop ran. Now: it regulates, says "disk full" once, and stops cleanly (exit 0).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { killAll, makeTempDir, startDaemon } from '../integration/helpers.js';
import { demoConfigText } from '../support/config.js';
import { fillUp, smallFilesystem } from './support.js';

after(killAll);

test('given a full disk, when homeostat run starts, then it regulates every loop and says disk full once', async (t) => {
  const fsys = smallFilesystem(128);
  if ('skip' in fsys) return t.skip(fsys.skip);
  try {
    fillUp(fsys.dir);
    // No broker (never the shared one on 1883, where another test's demo has the same node
    // id); debug, so the fogger's continuous moves are logged too.
    const configDir = makeTempDir('homeostat-full-disk-config-');
    t.after(configDir.remove);
    const configPath = path.join(configDir.dir, 'demo.yaml');
    writeFileSync(
      configPath,
      demoConfigText((doc) => doc.delete('mqtt')),
    );
    const daemon = startDaemon({
      configPath,
      dbPath: path.join(fsys.dir, 'state.db'),
      env: { LOG_LEVEL: 'debug' },
    });
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
