/**
 * A hot reload the database cannot take. Before: the daemon switched to the new config
 * in memory, then the write threw: half reloaded, and (in `homeostat run`) every later reload
 * was chained onto the rejected promise, so hot reload stayed off until a restart. Now: the
 * database is written first, so a refused reload changes nothing; it is retried with backoff,
 * and later edits apply.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { DEMO, holdWriteLock, startDemoStore } from './support.js';

const fermenter = (daemon: Daemon) => daemon.statuses().find((s) => s.loop === 'fermenter')!;

const startDemo = (t: TestContext) => startDemoStore(t, 'homeostat-reload-lock-', 5);

describe('a reload the database cannot take', () => {
  test('given a locked database, when the file changes, then nothing changes, ConfigValid says why, and the retry applies it once the lock is gone', async (t) => {
    const { run, dbPath } = await startDemo(t);
    const release = holdWriteLock(dbPath);
    const configBefore = run.daemon.currentConfig();

    const outcome = await run.daemon.reload(parseConfigText(DEMO.replace('setpoint: 18', 'setpoint: 19')));

    assert.equal(outcome.result, 'failed');
    assert.equal(run.daemon.currentConfig(), configBefore, 'still the previous config, not half of the new');
    await run.clock.advance(60_000);
    assert.equal(fermenter(run.daemon).setpoint, 18);
    const configValid = fermenter(run.daemon).conditions.find((c) => c.type === 'ConfigValid');
    assert.equal(configValid?.status, 'False');
    assert.equal(configValid?.reason, 'NotApplied');
    assert.match(configValid?.message ?? '', /not applied yet.*retrying/);

    release();
    await run.clock.advance(120_000);
    assert.equal(fermenter(run.daemon).setpoint, 19, 'the retry applied it');
    assert.equal(fermenter(run.daemon).conditions.find((c) => c.type === 'ConfigValid')?.status, 'True');
    await run.daemon.stop();
    run.store.close();
  });

  test('given a reload that failed, when the file is edited again, then the newer edit applies (hot reload still on)', async (t) => {
    const { run, dbPath } = await startDemo(t);
    const release = holdWriteLock(dbPath);
    const failed = await run.daemon.reload(parseConfigText(DEMO.replace('setpoint: 18', 'setpoint: 19')));
    assert.equal(failed.result, 'failed');
    await run.clock.advance(10 * 60_000);
    release();

    const outcome = await run.daemon.reload(parseConfigText(DEMO.replace('setpoint: 18', 'setpoint: 17')));
    assert.equal(outcome.result, 'applied');
    // The retry of the older edit never overrides the newer one.
    await run.clock.advance(10 * 60_000);
    assert.equal(fermenter(run.daemon).setpoint, 17);
    assert.equal(run.daemon.currentConfig().loops.fermenter?.setpoint, 17);
    await run.daemon.stop();
    run.store.close();
  });
});
