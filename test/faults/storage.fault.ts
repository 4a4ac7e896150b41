import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { sleep, waitUntil } from '../integration/helpers.js';
import {
  faultConfigText,
  LOOPS,
  nextRequestId,
  resultTopic,
  setTopic,
  stateTopic,
} from './support/config.js';
import { measureFrom, probeSamples, rssOf, stallFigures, startProbedDaemon } from './support/daemon.js';
import { desiredRows, integrity, lastEventId, movedAside } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { condition, type TestMqtt } from './support/mqtt.js';
import {
  actuatorLines,
  assertFreshlyReconciled,
  errorLines,
  fillDisk,
  freeDisk,
  openScenario,
  Resources,
  remount,
  scenarioPlace,
  startRegulating,
  Verdicts,
} from './support/scenario.js';

/**
 * "The control path must not depend on the store": the database damaged, locked by
 * another process or on a full disk, while the daemon runs (and at its start). Each time the
 * loops go on regulating from the desired state in memory, every loop shows the condition
 * `StorageHealthy` False (reason Corrupt, Locked, Full) in its retained state, and the store
 * recovers by itself — no restart — once the cause is gone. Child processes (`homeostat run`
 * at --speed 60 on the demo) with the probe preloaded for event-loop stalls, a private broker.
 */

const SPEED = 60;
/** How long the write lock is held: the issue asks for 30 s; HOMEOSTAT_FAULT_LOCK_S overrides. */
const LOCK_S = Number(process.env.HOMEOSTAT_FAULT_LOCK_S ?? 30);
/** Generous bound on any stall while the store fails: today a locked write blocks 5 s. */
const MAX_STALL_MS = 1_000;

const storageCondition = (client: TestMqtt, loop: string) =>
  condition(client.latestState(stateTopic(loop)), 'StorageHealthy');

/** Like everyLoopStorage, but records a failed check and returns undefined instead of throwing. */
async function everyLoopStorageOr(
  v: Verdicts,
  what: string,
  client: TestMqtt,
  status: 'True' | 'False',
  sinceMs: number,
  timeoutMs: number,
): Promise<number | undefined> {
  let atMs: number | undefined;
  await v.checkAsync(what, async () => {
    atMs = await everyLoopStorage(client, status, sinceMs, timeoutMs);
  });
  return atMs;
}

/** Waits until every loop's latest state has StorageHealthy with `status` (published at or after `sinceMs`). */
async function everyLoopStorage(
  client: TestMqtt,
  status: 'True' | 'False',
  sinceMs: number,
  timeoutMs: number,
) {
  const states = await Promise.all(
    LOOPS.map((loop) =>
      client.state(stateTopic(loop), (s) => condition(s, 'StorageHealthy')?.status === status, {
        sinceMs,
        timeoutMs,
        what: `${loop} state with StorageHealthy ${status}`,
      }),
    ),
  );
  return Math.max(...states.map((s) => s.atMs));
}

describe('storage faults while running and at start', () => {
  test('a page damaged at runtime: regulation continues, StorageHealthy False, recovered without a restart', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-corrupt-');
    const { res, v, broker, client, configPath, dbPath } = scenario;
    writeFileSync(configPath, faultConfigText({ brokerUrl: broker.url }));
    const daemon = await startRegulating(res, scenario, { speed: SPEED });

    // Given a runtime change, accepted (so the desired state in memory differs from the file)
    const requestId = nextRequestId('corrupt');
    const accepted = await client.command(
      setTopic('fermenter'),
      JSON.stringify({ setpoint: 19.5, requestId }),
      resultTopic('fermenter'),
      { requestId },
    );
    assert.equal(accepted?.accepted, true, JSON.stringify(accepted));
    await sleep(1_500);

    // When pages of loop_desired are overwritten in the file (after a checkpoint moved every
    // change into it), and another connection commits, so the daemon's page cache is dropped
    // and its next read of desired state meets the damage
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const measured = await measureFrom(daemon);
    const pages = damageTable(dbPath, 'loop_desired');
    const damagedAtMs = Date.now();

    // Then every loop says so, and goes on regulating
    const unhealthyAtMs = await everyLoopStorageOr(
      v,
      'StorageHealthy False on every loop',
      client,
      'False',
      damagedAtMs,
      15_000,
    );
    await sleep(3_000);
    const acted = actuatorLines(daemon.run, damagedAtMs);
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined, daemon.run.stderr));
    for (const loop of LOOPS) {
      v.check(`${loop} still publishes reconciled states`, () => assertFreshlyReconciled(client, loop));
    }

    // And the store recovers by itself: the file moved aside, a fresh one holding the desired
    // state kept in memory (the runtime change too), StorageHealthy True again
    const healthyAtMs = await everyLoopStorageOr(
      v,
      'StorageHealthy True again',
      client,
      'True',
      unhealthyAtMs ?? damagedAtMs,
      20_000,
    );
    v.check('the damaged file is moved aside', () => assert.equal(movedAside(dbPath).length, 1));
    v.check('the fresh file is sound', () => assert.deepEqual(integrity(dbPath), ['ok']));
    await v.checkAsync('the accepted runtime change survives the recovery', async () => {
      const rows = await waitUntil(
        () => {
          try {
            const rows = desiredRows(dbPath);
            return rows.size === LOOPS.length ? rows : undefined;
          } catch {
            return undefined;
          }
        },
        { what: 'desired state in the fresh database', timeoutMs: 10_000 },
      );
      assert.equal(rows.get('fermenter')?.setpoint, 19.5);
      assert.equal(client.latestState(stateTopic('fermenter'))?.setpoint, 19.5);
    });
    reportFigures(t, {
      scenario: 'page damaged at runtime',
      timeToSafeMs: unhealthyAtMs === undefined ? undefined : unhealthyAtMs - damagedAtMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: safeLastEventId(dbPath),
      notes:
        `${pages} pages damaged; ${acted.length} actuator writes after it; ` +
        `recovered ${healthyAtMs === undefined ? 'never' : `in ${healthyAtMs - damagedAtMs} ms`} ` +
        '(time to safe state: to StorageHealthy False; rows: event ids in the file in place)',
    });
    v.settle();
  });

  test(`a write lock held ${LOCK_S} s by another process: no long event-loop stall, pulses and commands go on`, {
    timeout: 90_000 + LOCK_S * 2_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-lock-');
    const { res, v, broker, client, configPath, dbPath } = scenario;
    const withFermenterSetpoint = (setpoint: number) =>
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => doc.setIn(['loops', 'fermenter', 'setpoint'], setpoint),
      });
    writeFileSync(configPath, withFermenterSetpoint(18));
    const daemon = await startRegulating(res, scenario, { speed: SPEED });
    await sleep(1_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const eventsBefore = lastEventId(dbPath);

    // When another process takes the write lock (WAL: readers go on, writers wait) and holds it
    const locker = new Database(dbPath);
    res.add(() => locker.close());
    locker.pragma('busy_timeout = 5000');
    const measured = await measureFrom(daemon);
    locker.exec('BEGIN IMMEDIATE');
    const lockedAtMs = Date.now();
    // … and the file is edited meanwhile (a hot reload that cannot be stored until the lock goes)
    setTimeout(() => writeFileSync(configPath, withFermenterSetpoint(18.5)), 2_000);
    // … while commands keep coming (each must be answered without waiting for the lock)
    const answers: number[] = [];
    let unanswered = 0;
    for (let i = 0; Date.now() - lockedAtMs < LOCK_S * 1000; i++) {
      const requestId = nextRequestId('lock');
      const sentAtMs = Date.now();
      const result = await client.command(
        setTopic('room'),
        JSON.stringify({ setpoint: i % 2 === 0 ? 20.5 : 20, requestId }),
        resultTopic('room'),
        { requestId, timeoutMs: 6_000 },
      );
      if (result) answers.push(Date.now() - sentAtMs);
      else unanswered += 1;
      await sleep(1_000);
    }
    const lockedState = condition(client.latestState(stateTopic('room')), 'StorageHealthy');
    locker.exec('COMMIT');
    const releasedAtMs = Date.now();
    await sleep(1_000);

    // Then the event loop never stalled for long, and the loops kept switching through it
    const stall = measured();
    const acted = actuatorLines(daemon.run, lockedAtMs, releasedAtMs);
    v.check(`longest event-loop stall under the lock below ${MAX_STALL_MS} ms`, () =>
      assert.ok(stall.longestStallMs < MAX_STALL_MS, `${stall.longestStallMs} ms`),
    );
    v.check('actuators commanded while the lock was held', () =>
      assert.ok(acted.length > 0, 'no actuator line'),
    );
    v.check('every command answered while the lock was held', () =>
      assert.equal(unanswered, 0, `${unanswered} unanswered`),
    );
    v.check('StorageHealthy False (Locked) while the lock was held', () =>
      assert.equal(lockedState?.status, 'False', JSON.stringify(lockedState)),
    );
    // And the store catches up once the lock is gone: StorageHealthy True, writes land
    await everyLoopStorageOr(v, 'StorageHealthy True after the lock', client, 'True', releasedAtMs, 15_000);
    await v.checkAsync('rows written after the lock', () =>
      waitUntil(() => lastEventId(dbPath) > eventsBefore, {
        what: 'rows written after the lock',
        timeoutMs: 10_000,
      }),
    );
    // And the reload the lock held up is applied (retried), and a later edit applies too
    await v.checkAsync('the reload made during the lock applies', () =>
      client.state(stateTopic('fermenter'), (s) => s.setpoint === 18.5, {
        sinceMs: lockedAtMs,
        timeoutMs: 15_000,
      }),
    );
    const editedAtMs = Date.now();
    writeFileSync(configPath, withFermenterSetpoint(17.5));
    await v.checkAsync('a later edit applies', () =>
      client.state(stateTopic('fermenter'), (s) => s.setpoint === 17.5, {
        sinceMs: editedAtMs,
        timeoutMs: 15_000,
      }),
    );
    v.check('integrity', () => assert.deepEqual(integrity(dbPath), ['ok']));
    answers.sort((a, b) => a - b);
    reportFigures(t, {
      scenario: `write lock held ${LOCK_S} s`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: lastEventId(dbPath) - eventsBefore,
      notes: `${acted.length} actuator writes during the lock; ${answers.length} commands answered (slowest ${answers.at(-1) ?? '–'} ms), ${unanswered} not`,
    });
    v.settle();
  });

  /** Broken at start: the filesystem full, or the directory read-only; each fixed later. */
  const atStart = [
    {
      name: 'a full disk at start',
      scenario: 'full disk at start',
      reason: 'Full',
      fixed: 'space was freed',
      breakIt: (mount: string) => {
        const filler = fillDisk(mount);
        return () => freeDisk(filler);
      },
    },
    {
      name: 'an unwritable (read-only) database directory at start',
      scenario: 'read-only directory at start',
      reason: 'Unwritable',
      fixed: 'it was made writable',
      breakIt: (mount: string) => {
        remount(mount, 'ro');
        return () => remount(mount, 'rw');
      },
    },
  ] as const;
  for (const c of atStart) {
    test(`${c.name}: regulates from the config with StorageHealthy False (${c.reason}), then opens the store once ${c.fixed}`, {
      timeout: 120_000,
    }, async (t) => {
      const res = new Resources(t);
      const v = new Verdicts();
      const mount = res.tmpfs(1024 * 1024);
      if (!mount) {
        t.skip('cannot mount a tmpfs here (needs root): scenario not run');
        return;
      }
      const { broker, client, dir, configPath } = await scenarioPlace(res, 'homeostat-fault-at-start-');
      const dbPath = join(mount, 'state.db');
      writeFileSync(configPath, faultConfigText({ brokerUrl: broker.url }));
      const fix = c.breakIt(mount);

      // When the daemon starts with its database there
      const startedAtMs = Date.now();
      const daemon = startProbedDaemon({ configPath, dbPath, speed: SPEED, dir });
      res.daemon(daemon.run);

      // Then it regulates from the config, saying the store is unhealthy and why
      const unhealthyAtMs = await everyLoopStorageOr(
        v,
        'StorageHealthy False on every loop',
        client,
        'False',
        startedAtMs,
        30_000,
      );
      v.check(`reason ${c.reason}`, () => assert.equal(storageCondition(client, 'room')?.reason, c.reason));
      await sleep(2_000);
      const acted = actuatorLines(daemon.run, startedAtMs);
      v.check('the daemon runs', () =>
        assert.equal(
          daemon.run.exitStatus,
          undefined,
          `exited ${JSON.stringify(daemon.run.exitStatus)}: ${daemon.run.lines.at(-1)?.msg}`,
        ),
      );
      for (const loop of LOOPS) {
        v.check(`${loop} publishes reconciled states`, () => assertFreshlyReconciled(client, loop));
      }

      // When the cause is gone, the store opens by itself (kept retrying), with the config applied
      fix();
      const fixedAtMs = Date.now();
      const healthyAtMs = daemon.run.exitStatus
        ? undefined
        : await everyLoopStorageOr(
            v,
            `StorageHealthy True once ${c.fixed}`,
            client,
            'True',
            fixedAtMs,
            30_000,
          );
      if (!daemon.run.exitStatus) {
        await v.checkAsync(`desired state written once ${c.fixed}`, () =>
          waitUntil(() => existsSync(dbPath) && safeDesiredCount(dbPath) === LOOPS.length, {
            what: 'desired rows',
            timeoutMs: 10_000,
          }),
        );
        v.check('integrity', () => assert.deepEqual(integrity(dbPath), ['ok']));
      }
      reportFigures(t, {
        scenario: c.scenario,
        timeToSafeMs: unhealthyAtMs === undefined ? undefined : unhealthyAtMs - startedAtMs,
        // From the spawn: start-up (tsx compiling the daemon) is in these figures.
        ...stallFigures(probeSamples(daemon.probePath, startedAtMs, Date.now())),
        rssAfterBytes: rssOf(daemon.run.child.pid),
        rowsWritten: safeLastEventId(dbPath),
        notes:
          `1 MiB tmpfs; ${acted.length} actuator writes without a store; ` +
          `store opened ${healthyAtMs === undefined ? 'never' : `${healthyAtMs - fixedAtMs} ms after ${c.fixed}`} ` +
          '(time to safe state: start → StorageHealthy False; stalls include start-up)',
      });
      v.settle();
    });
  }
  test('a disk filling up while running: regulation, answers to every command, one error per streak, reloads retried', {
    timeout: 150_000,
  }, async (t) => {
    const res = new Resources(t);
    const v = new Verdicts();
    const mount = res.tmpfs(4 * 1024 * 1024);
    if (!mount) {
      t.skip('cannot mount a tmpfs here (needs root): full-disk scenario not run');
      return;
    }
    const place = await scenarioPlace(res, 'homeostat-fault-full-run-');
    const { broker, client, configPath } = place;
    const dbPath = join(mount, 'state.db');
    const withRoomSetpoint = (setpoint: number) =>
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => doc.setIn(['loops', 'room', 'setpoint'], setpoint),
      });
    writeFileSync(configPath, withRoomSetpoint(20));
    const daemon = await startRegulating(res, place, { speed: SPEED, dbPath });
    await sleep(1_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);

    // When the filesystem fills up
    const measured = await measureFrom(daemon);
    const filler = fillDisk(mount);
    const fullAtMs = Date.now();
    const unhealthyAtMs = await everyLoopStorageOr(
      v,
      'StorageHealthy False on every loop',
      client,
      'False',
      fullAtMs,
      20_000,
    );
    v.check('reason Full', () => assert.equal(storageCondition(client, 'room')?.reason, 'Full'));

    // … and commands keep coming, valid and invalid: each one is answered
    const commands = [
      ...Array.from({ length: 50 }, (_, i) => ({ payload: { setpoint: 99 + i }, valid: false })),
      ...Array.from({ length: 10 }, (_, i) => ({ payload: { setpoint: 18 + i * 0.5 }, valid: true })),
    ];
    let unanswered = 0;
    let wronglyAccepted = 0;
    for (const command of commands) {
      const requestId = nextRequestId('full');
      const result = await client.command(
        setTopic('fermenter'),
        JSON.stringify({ ...command.payload, requestId }),
        resultTopic('fermenter'),
        { requestId, timeoutMs: 1_000 },
      );
      if (!result) unanswered += 1;
      else if (!command.valid && result.accepted) wronglyAccepted += 1;
    }
    // … and the file is edited (a hot reload that cannot be stored)
    writeFileSync(configPath, withRoomSetpoint(22));
    await sleep(3_000);
    const fullForMs = Date.now() - fullAtMs;
    const errors = errorLines(daemon.run, fullAtMs);
    const acted = actuatorLines(daemon.run, fullAtMs);

    // Then regulation went on, every command got its result, storage errors were logged once per streak
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined));
    for (const loop of LOOPS) {
      v.check(`${loop} still publishes reconciled states on a full disk`, () =>
        assertFreshlyReconciled(client, loop),
      );
    }
    v.check('every command answered on a full disk', () =>
      assert.equal(unanswered, 0, `${unanswered} of ${commands.length} got no result`),
    );
    v.check('invalid commands rejected', () => assert.equal(wronglyAccepted, 0));
    v.check('storage errors logged once per streak (≤ 10 error lines)', () =>
      assert.ok(
        errors.length <= 10,
        `${errors.length} error lines in ${fullForMs} ms, e.g.:\n${errors
          .slice(0, 3)
          .map((l) => l.msg)
          .join('\n')}`,
      ),
    );

    // When space is freed: the store is healthy again, the failed reload was retried (setpoint
    // 22 from the file in force) and a later edit applies too
    freeDisk(filler);
    const freedAtMs = Date.now();
    const healthyAtMs = await everyLoopStorageOr(
      v,
      'StorageHealthy True once there is space',
      client,
      'True',
      freedAtMs,
      30_000,
    );
    await v.checkAsync('the reload that failed on the full disk is retried', () =>
      client.state(stateTopic('room'), (s) => s.setpoint === 22, {
        sinceMs: freedAtMs,
        timeoutMs: 15_000,
        what: 'room setpoint 22 from the reload retried after the disk was full',
      }),
    );
    const editedAtMs = Date.now();
    writeFileSync(configPath, withRoomSetpoint(23));
    await v.checkAsync('a later edit applies', () =>
      client.state(stateTopic('room'), (s) => s.setpoint === 23, {
        sinceMs: editedAtMs,
        timeoutMs: 15_000,
        what: 'room setpoint 23 from a later edit',
      }),
    );
    v.check('integrity', () => assert.deepEqual(integrity(dbPath), ['ok']));
    reportFigures(t, {
      scenario: 'disk full while running',
      timeToSafeMs: unhealthyAtMs === undefined ? undefined : unhealthyAtMs - fullAtMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: safeLastEventId(dbPath),
      notes:
        `4 MiB tmpfs; ${acted.length} actuator writes while full; ${commands.length - unanswered}/${commands.length} commands answered, ` +
        `${errors.length} error lines in ${Math.round(fullForMs / 1000)} s full; ` +
        `healthy ${healthyAtMs === undefined ? 'never' : `${healthyAtMs - freedAtMs} ms after space was freed`} ` +
        '(time to safe state: to StorageHealthy False)',
    });
    v.settle();
  });
});

/** lastEventId, or undefined when the file cannot be read (damaged, missing). */
function safeLastEventId(dbPath: string): number | undefined {
  try {
    return lastEventId(dbPath);
  } catch {
    return undefined;
  }
}

function safeDesiredCount(dbPath: string): number {
  try {
    return desiredRows(dbPath).size;
  } catch {
    return 0;
  }
}

/**
 * Damages every page of `table` (and its indexes) in the database file: checkpoints first so
 * the file holds the table's latest pages, overwrites them with random bytes, then commits a
 * small change through another table so the daemon's connection drops its page cache (it
 * would otherwise go on reading its clean copies). Returns how many pages were damaged.
 */
function damageTable(dbPath: string, table: string): number {
  const db = new Database(dbPath);
  let pages: number[];
  let pageSize: number;
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('wal_checkpoint(TRUNCATE)');
    pageSize = db.pragma('page_size', { simple: true }) as number;
    pages = db
      .prepare<[string, string], { pageno: number }>(
        "SELECT pageno FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?)",
      )
      .all(table, table)
      .map((r) => r.pageno);
  } finally {
    db.close();
  }
  assert.ok(pages.length > 0, `no pages found for ${table}`);
  const fd = openSync(dbPath, 'r+');
  try {
    for (const page of pages) writeSync(fd, randomBytes(pageSize), 0, pageSize, (page - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
  const writer = new Database(dbPath);
  try {
    writer.pragma('busy_timeout = 5000');
    writer
      .prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('faultSuite', ?)")
      .run(String(Date.now()));
  } finally {
    writer.close();
  }
  return pages.length;
}
