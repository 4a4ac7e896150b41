import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import type YAML from 'yaml';
import type { LoopReport } from '../../src/commands/inspect.js';
import { parseConfigText } from '../../src/config/load.js';
import type { LoopMemory } from '../../src/core/loop-state.js';
import type { LoopStatus } from '../../src/core/status.js';
import { applyConfig } from '../../src/daemon/store.js';
import { type DesiredRecord, DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import {
  type CliProcess,
  demoConfigText,
  killAll,
  type LogLine,
  makeTempDir,
  runCli,
  seededRandom,
  sleep,
  startDaemon,
  waitUntil,
  withReadOnlyDb,
} from '../integration/helpers.js';

/**
 * Crashes and restarts, in the fault suite since it takes half a minute (kills.fault.ts kills
 * 50 times under traffic and checks the accepted changes; this checks what each loop's memory
 * and the config's generation become): the daemon is killed with SIGKILL (no shutdown code
 * runs, like a crash or an OOM kill) at varied moments and restarted on the same database. Runs the
 * real CLI on the demo's simulated plants at --speed 60, with memory flushed every second of
 * clock time. After every crash:
 * - the file passes `PRAGMA integrity_check` and was never moved aside as unreadable;
 * - desired state (setpoint, mode, their sources, generation per loop) is exactly as before it,
 *   runtime changes included, and the same file keeps generation 1 ("config unchanged");
 * - every loop's memory is stored, plausible (integral finite and within the output range,
 *   relays with their last switch time), at most one flush behind, and never older (in wall
 *   time) than what the previous run stored;
 * - the next run resumes from it: the fermenter's integral continues from the stored value.
 * And a loop removed from the file is finalized once, also across crashes.
 */

const SPEED = 60;
const LOOPS = ['fermenter', 'greenhouse_humidity', 'room'];
/** Controller output range: a heater or fogger alone 0..1, heater + cooler −1..1. */
const OUTPUT_RANGE: Record<string, [number, number]> = {
  fermenter: [-1, 1],
  greenhouse_humidity: [0, 1],
  room: [0, 1],
};
/**
 * A crash loses at most one flush (1 s of clock time here) plus the time since the loop's last
 * cycle (a reading every 10–15 s): 60 s of clock time (1 s of real time) is a generous bound.
 */
const MAX_STATE_LAG_MS = 60_000;
/**
 * Wall-clock wait between "homeostat regulating" and a SIGTERM: `run` installs its signal
 * handlers only once the daemon has started, after that line, so an immediate SIGTERM would
 * kill the process by the signal (reported; not what these tests are about).
 */
const STOP_GRACE_MS = 200;

/** The demo with memory flushed every second of clock time, and no broker to reach. */
function crashConfigText(edit?: (doc: YAML.Document) => void): string {
  return demoConfigText((doc) => {
    doc.delete('mqtt');
    doc.set('storage', { memoryFlushS: 1 });
    edit?.(doc);
  });
}

// ---------------------------------------------------------------------------------------
// Reading the database file directly (read-only): desired state, configs and events with plain
// SQL; memory and status through StateStore.load, so the check does not depend on their encoding

interface StoredState {
  memory: LoopMemory;
  /** The memory as JSON, to tell a rewritten state from the one a previous run left. */
  memoryText: string;
  status: LoopStatus;
  savedAtMs: number;
}

interface EventRow {
  id: number;
  loop: string | null;
  kind: string;
  source: string | null;
  message: string;
  data: unknown;
}

interface Snapshot {
  integrity: string[];
  desired: DesiredRecord[];
  lastGeneration: string | undefined;
  configs: { generation: number; hash: string }[];
  state: Map<string, StoredState>;
  events: EventRow[];
}

function snapshot(dbPath: string): Snapshot {
  return withReadOnlyDb(dbPath, (db) => ({
    integrity: (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check),
    desired: db.prepare<[], DesiredRecord>('SELECT * FROM loop_desired ORDER BY loop').all(),
    lastGeneration: db
      .prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'lastGeneration'")
      .get()?.value,
    configs: db
      .prepare<[], { generation: number; hash: string }>(
        'SELECT generation, hash FROM configs ORDER BY generation',
      )
      .all(),
    state: readState(db),
    events: db
      .prepare<[], Omit<EventRow, 'data'> & { data_json: string | null }>(
        'SELECT id, loop, kind, source, message, data_json FROM events ORDER BY id',
      )
      .all()
      .map(({ data_json, ...row }) => ({
        ...row,
        data: data_json === null ? undefined : JSON.parse(data_json),
      })),
  }));
}

/** Memory and status as the daemon reads them back (StateStore.load: whatever the row layout). */
function readState(db: Database.Database): Map<string, StoredState> {
  const store = new StateStore(db);
  const states = new Map<string, StoredState>();
  for (const loop of LOOPS) {
    const stored = store.load(loop);
    if (!stored) continue;
    assert.ok(stored.status, `${loop}: stored status decodes`);
    states.set(loop, {
      memory: stored.memory as LoopMemory,
      memoryText: JSON.stringify(stored.memory),
      status: stored.status,
      savedAtMs: stored.savedAtMs,
    });
  }
  return states;
}

function storedState(dbPath: string, loop: string): StoredState | undefined {
  return withReadOnlyDb(dbPath, (db) => readState(db).get(loop));
}

// ---------------------------------------------------------------------------------------
// One run of the daemon

interface Run {
  daemon: CliProcess;
  /**
   * Wall-clock time of the "starting homeostat" line (or, on a database an earlier run got
   * ahead on, of the line saying where simulated time goes on from). The scaled clock starts a
   * few ms before it, so clock time t maps to wall time origin + (t − clockStartMs) / SPEED.
   */
  originMs: number;
  /**
   * Simulated time at the start: the wall clock on a fresh database, where the previous run's
   * records got to on a restart (a demo restarted never interleaves its hours with the last's).
   */
  clockStartMs: number;
  /**
   * How much earlier than `originMs` the scaled clock may have started, ms: at most the time
   * from the spawn to that line (the process did not exist before). On a busy machine it is
   * tens of ms; wall times mapped from clock times may be late by as much.
   */
  originSlackMs: number;
  /** Wall-clock time SIGKILL was sent. */
  killedAtMs?: number;
  /** Wall-clock time the process was seen dead (after the kill). */
  exitedAtMs?: number;
}

async function start(configPath: string, dbPath: string): Promise<Run> {
  const spawnedAtMs = Date.now();
  const daemon = startDaemon({ configPath, dbPath, speed: SPEED });
  const starting = await daemon.waitForLine(/^starting homeostat/);
  const resumedAt = daemon.find(/simulated time goes on from/);
  const originMs = resumedAt?.time ?? starting.time;
  const clockStartMs = resumedAt === undefined ? originMs : Number(resumedAt.simulatedStartMs);
  assert.ok(Number.isFinite(clockStartMs), `simulatedStartMs in ${JSON.stringify(resumedAt)}`);
  return { daemon, originMs, clockStartMs, originSlackMs: Math.max(0, originMs - spawnedAtMs) };
}

async function crash(run: Run): Promise<void> {
  run.killedAtMs = Date.now();
  const exit = await run.daemon.kill('SIGKILL');
  run.exitedAtMs = Date.now();
  // Killed by us, not exited on its own before the kill.
  assert.equal(exit.signal, 'SIGKILL', `the daemon had already exited (${exit.code}):\n${run.daemon.output}`);
}

/** The wall-clock time a clock time of `run` corresponds to. */
function wallMsOf(run: Run, clockMs: number): number {
  return run.originMs + (clockMs - run.clockStartMs) / SPEED;
}

function eventsOf(snap: Snapshot, kind: string, loop?: string): EventRow[] {
  return snap.events.filter((e) => e.kind === kind && (loop === undefined || e.loop === loop));
}

/** Checks every snapshot must pass, whenever the crash came. */
function assertHealthy(snap: Snapshot, dir: string, context: string): void {
  assert.deepEqual(snap.integrity, ['ok'], `${context}: PRAGMA integrity_check`);
  // openStore moves an unreadable file aside and starts fresh: that must never have happened.
  assert.deepEqual(
    readdirSync(dir).filter((name) => /\.(corrupt|newer)-/.test(name)),
    [],
    `${context}: no database moved aside`,
  );
  assert.deepEqual(eventsOf(snap, 'database-recovered'), [], `${context}: no database-recovered event`);
  for (const loop of LOOPS) {
    const state = snap.state.get(loop);
    assert.ok(state, `${context}: loop_state row of ${loop}`);
    const { integral } = state.memory.pid;
    const [min, max] = OUTPUT_RANGE[loop]!;
    assert.ok(
      Number.isFinite(integral) && integral >= min && integral <= max,
      `${context}: ${loop} pid.integral ${integral} within ${min}..${max}`,
    );
    assert.equal(typeof state.memory.regulating, 'boolean', `${context}: ${loop} memory shape`);
    for (const [id, relay] of Object.entries(state.memory.relays)) {
      // Resuming counts a relay found in another state as switched at start, so every relay in
      // memory has a switch time; without it minimum on/off times would not hold after a crash.
      assert.ok(
        Number.isFinite(relay.lastSwitchMs) && relay.lastSwitchMs! <= state.savedAtMs,
        `${context}: ${loop} relay ${id} lastSwitchMs ${relay.lastSwitchMs} (saved at ${state.savedAtMs})`,
      );
    }
    assert.equal(state.status.loop, loop);
  }
  // A relay that was ever switched on is in its loop's memory with its switch time.
  const switchedOn = new Set(
    eventsOf(snap, 'actuator')
      .filter((e) => (e.data as { level?: number } | undefined)?.level === 1)
      .map((e) => `${e.loop}/${(e.data as { actuator: string }).actuator}`),
  );
  for (const key of switchedOn) {
    const [loop, actuator] = key.split('/') as [string, string];
    if (actuator === 'fogger') continue; // continuous: no relay memory
    assert.ok(
      snap.state.get(loop)?.memory.relays[actuator]?.lastSwitchMs !== undefined,
      `${context}: ${actuator} switched on once, so its relay memory has lastSwitchMs`,
    );
  }
}

/**
 * The crash config in a new temp dir and the database path beside it; after the test, every
 * process started here is killed and the dir removed.
 */
function crashFiles(t: TestContext, prefix: string): { dir: string; configPath: string; dbPath: string } {
  const { dir, remove } = makeTempDir(prefix);
  t.after(async () => {
    await killAll();
    remove();
  });
  const configPath = join(dir, 'homeostat.yaml');
  writeFileSync(configPath, crashConfigText());
  return { dir, configPath, dbPath: join(dir, 'state.db') };
}

describe('crash and restart: kill -9 at varied moments at --speed 60', () => {
  after(killAll);

  test('desired state, the config generation and controller memory survive 8 crashes; runtime changes too', async (t) => {
    const { dir, configPath, dbPath } = crashFiles(t, 'homeostat-crash-');
    const random = seededRandom(0x5eed_2024);

    // Given a first run that applied the file as generation 1 and regulated for 150 s of clock time
    let run = await start(configPath, dbPath);
    const applied = await run.daemon.waitForLine(/^config (applied|unchanged)/);
    assert.equal(applied.msg, 'config applied as generation 1');
    await run.daemon.waitForLine('homeostat regulating 3 loop(s)');
    await sleep(2_500);
    await crash(run);
    let before = snapshot(dbPath);
    assertHealthy(before, dir, 'after the first crash');
    assert.deepEqual(
      before.desired.map((r) => [r.loop, r.setpoint, r.setpoint_source, r.mode, r.mode_source, r.generation]),
      [
        ['fermenter', 18, 'file', 'heat_cool', 'file', 1],
        ['greenhouse_humidity', 65, 'file', 'humidify', 'file', 1],
        ['room', 20, 'file', 'heat', 'file', 1],
      ],
    );
    // The fermenter (chamber at 22 °C, setpoint 18, saturated at full cooling) winds its integral
    // up by back-calculation, ~0.025 per reading from 0 after a fresh start: a value that tells
    // "resumed" (near the stored one) from "started afresh" (0).
    const firstIntegral = before.state.get('fermenter')!.memory.pid.integral;
    assert.ok(firstIntegral > 0.15, `fermenter integral after 150 s: ${firstIntegral}`);
    const configsBefore = before.configs;
    /** The run whose clock stamped each loop's stored state. */
    const writer = new Map(LOOPS.map((loop) => [loop, run]));
    let expectedDesired = before.desired;
    let expectedLastGeneration = 1;
    let roomGeneration = 1;

    const ROUNDS = 8;
    /** Rounds killed as soon as the database is open (config apply, first cycles, under way). */
    const EARLY_KILL_ROUNDS = new Set([2, 6]);
    /** The room's setpoint is changed to 21 while the daemon is down before this round. */
    const ROOM_CHANGE_ROUND = 4;
    const resumed: { round: number; stored: number; first: number }[] = [];
    let maxLagMs = 0;

    for (let round = 1; round <= ROUNDS; round++) {
      const context = `round ${round}`;

      // When, while the daemon is down, setpoints are changed at runtime (as the CLI or MQTT
      // would): the fermenter's every round (18.5 / 18), so its first state after the restart
      // differs from the stored one and is written at the first flush; the room's once, to 21.
      const db = new Database(dbPath);
      try {
        const desired = new DesiredStore(db, Date.now);
        const nudge = desired.setDesired('fermenter', { setpoint: round % 2 === 1 ? 18.5 : 18 }, 'cli');
        assert.deepEqual(nudge, { changed: true, generation: expectedLastGeneration + 1 });
        expectedLastGeneration = nudge.generation;
        if (round === ROOM_CHANGE_ROUND) {
          const change = desired.setDesired('room', { setpoint: 21 }, 'cli');
          assert.deepEqual(change, { changed: true, generation: expectedLastGeneration + 1 });
          expectedLastGeneration = roomGeneration = change.generation;
        }
        expectedDesired = db.prepare<[], DesiredRecord>('SELECT * FROM loop_desired ORDER BY loop').all();
      } finally {
        db.close();
      }
      const fermenterGeneration = expectedLastGeneration - (round === ROOM_CHANGE_ROUND ? 1 : 0);

      run = await start(configPath, dbPath);
      if (EARLY_KILL_ROUNDS.has(round)) {
        await run.daemon.waitForLine(/^state in /);
        await crash(run);
      } else {
        // Then the same file keeps its generation (runtime changes moved the counter on)
        const line = await run.daemon.waitForLine(/^config (applied|unchanged)/);
        assert.equal(line.msg, 'config unchanged: generation 1', `${context}: ${line.msg}`);
        assert.equal(line.changed, false);
        await run.daemon.waitForLine('homeostat regulating 3 loop(s)');

        // And the fermenter resumes from its stored integral: its first state written by this
        // run has the integral the crash left (the first reading after a restart integrates
        // nothing: it is stamped before the stored one, the clock having restarted at now).
        const stored = before.state.get('fermenter')!;
        const first = await waitUntil(
          () => {
            const now = storedState(dbPath, 'fermenter');
            return now?.status.observedGeneration === fermenterGeneration ? now : undefined;
          },
          { what: `${context}: the fermenter's first state after the restart`, intervalMs: 5 },
        );
        resumed.push({ round, stored: stored.memory.pid.integral, first: first.memory.pid.integral });
        // Two readings' worth of integration (~0.025 each) at most, against 0 for a fresh start.
        assert.ok(
          Math.abs(first.memory.pid.integral - stored.memory.pid.integral) <= 0.06,
          `${context}: fermenter integral resumed at ${first.memory.pid.integral}, stored ${stored.memory.pid.integral}`,
        );
        assert.equal(first.status.setpoint, round % 2 === 1 ? 18.5 : 18);

        if (round === ROOM_CHANGE_ROUND) {
          // Then the room's change is in force after the restart, with its own generation, and acted on
          const room = await waitUntil(
            () => {
              const state = storedState(dbPath, 'room');
              return state?.status.observedGeneration === roomGeneration ? state : undefined;
            },
            { what: `room observedGeneration ${roomGeneration}` },
          );
          assert.equal(room.status.setpoint, 21, 'the loop regulates to the runtime setpoint');
          const status = await runCli(['status', '--db', dbPath, '--json']);
          assert.equal(status.code, 0, status.stderr);
          const report = (JSON.parse(status.stdout) as LoopReport[]).find((r) => r.loop === 'room');
          assert.ok(report, status.stdout);
          assert.equal(report.desired.setpoint, 21);
          assert.equal(report.desired.setpointSource, 'cli');
          assert.equal(report.desired.generation, roomGeneration);
          assert.ok(roomGeneration > 1, 'a bumped generation');
          assert.equal(report.observedGeneration, roomGeneration);
          assert.equal(report.status?.setpoint, 21);
        }
        await sleep(300 + random() * 2_200);
        await crash(run);
      }

      const after = snapshot(dbPath);
      assertHealthy(after, dir, context);
      // Desired state is exactly what it was before the crash (after the runtime changes).
      assert.deepEqual(after.desired, expectedDesired, `${context}: desired state`);
      assert.equal(after.lastGeneration, String(expectedLastGeneration), `${context}: generation counter`);
      assert.deepEqual(
        after.configs,
        configsBefore,
        `${context}: the file was applied once, as generation 1`,
      );
      assert.equal(eventsOf(after, 'config-applied').length, 1, `${context}: one config-applied event`);

      for (const loop of LOOPS) {
        const old = before.state.get(loop)!;
        const now = after.state.get(loop)!;
        if (!EARLY_KILL_ROUNDS.has(round)) {
          assert.equal(
            now.status.observedGeneration,
            expectedDesired.find((r) => r.loop === loop)!.generation,
            `${context}: ${loop} observedGeneration`,
          );
        }
        if (now.memoryText === old.memoryText && now.savedAtMs === old.savedAtMs) {
          // Not rewritten by this run: only possible when it was killed while starting.
          assert.ok(EARLY_KILL_ROUNDS.has(round), `${context}: ${loop} state was written while running`);
          continue;
        }
        // Written by this run: in wall-clock terms after the previous run's last write (clock
        // times are compared through each run's mapping to wall time), and not after the kill.
        const savedWallMs = wallMsOf(run, now.savedAtMs);
        assert.ok(
          savedWallMs > wallMsOf(writer.get(loop)!, old.savedAtMs),
          `${context}: ${loop} saved_at_ms went backwards`,
        );
        // Not after the process died: bounded by when its death was seen, plus how late the
        // mapping of clock to wall time may be (the clock's origin is known to originSlackMs).
        assert.ok(
          savedWallMs <= run.exitedAtMs! + run.originSlackMs,
          `${context}: ${loop} saved ${savedWallMs - run.exitedAtMs!} ms (wall) after the process died (origin known to ${run.originSlackMs} ms)`,
        );
        // A crash loses at most one flush period of memory (StateStore's contract).
        if (!EARLY_KILL_ROUNDS.has(round)) {
          const lagMs = (run.killedAtMs! - savedWallMs) * SPEED;
          maxLagMs = Math.max(maxLagMs, lagMs);
          assert.ok(
            lagMs <= MAX_STATE_LAG_MS,
            `${context}: ${loop} state ${lagMs} ms (clock) old at the crash`,
          );
        }
        writer.set(loop, run);
      }
      before = after;
    }

    assert.ok(resumed.length >= 5, `resume checked ${resumed.length} times`);
    // The integral kept growing across runs: memory resumed each time, never restarted from 0.
    assert.ok(
      resumed.at(-1)!.first > firstIntegral + 0.15,
      `fermenter integral ${firstIntegral} after the first run, ${resumed.at(-1)!.first} at the last restart`,
    );

    // Finally a clean start and stop: every runtime change is still in force, the file unchanged
    assert.match(readFileSync(configPath, 'utf8'), /setpoint: 20\n/);
    run = await start(configPath, dbPath);
    assert.equal(
      (await run.daemon.waitForLine(/^config (applied|unchanged)/)).msg,
      'config unchanged: generation 1',
    );
    await run.daemon.waitForLine('homeostat regulating 3 loop(s)');
    await sleep(500);
    assert.deepEqual(await run.daemon.kill('SIGTERM'), { code: 0, signal: null }, run.daemon.output);
    const final = snapshot(dbPath);
    assertHealthy(final, dir, 'after a clean stop');
    assert.deepEqual(final.desired, expectedDesired);
    const status = await runCli(['status', '--db', dbPath, '--json']);
    assert.equal(status.code, 0, status.stderr);
    const reports = JSON.parse(status.stdout) as LoopReport[];
    assert.deepEqual(
      reports.map((r) => [
        r.loop,
        r.desired.setpoint,
        r.desired.setpointSource,
        r.desired.mode,
        r.desired.generation,
        r.observedGeneration,
        r.status?.setpoint,
        typeof r.savedAtMs,
      ]),
      [
        ['fermenter', 18, 'cli', 'heat_cool', expectedLastGeneration, expectedLastGeneration, 18, 'number'],
        ['greenhouse_humidity', 65, 'file', 'humidify', 1, 1, 65, 'number'],
        ['room', 21, 'cli', 'heat', roomGeneration, roomGeneration, 21, 'number'],
      ],
    );
    t.diagnostic(`oldest state at a crash: ${Math.round(maxLagMs / 1000)} s of clock time`);
    t.diagnostic(
      `fermenter integral stored → resumed: ${resumed.map((r) => `${r.stored.toFixed(3)}→${r.first.toFixed(3)}`).join(', ')}`,
    );
  });

  test('a loop removed from the file is finalized after a crash: desired row gone, events, actuators safe', async (t) => {
    const { configPath, dbPath } = crashFiles(t, 'homeostat-finalize-');

    // Given a daemon that regulated the three demo loops and crashed
    let run = await start(configPath, dbPath);
    await run.daemon.waitForLine('homeostat regulating 3 loop(s)');
    await waitUntil(() => snapshot(dbPath).state.size === 3, { what: 'state of the three loops' });
    await crash(run);
    const before = snapshot(dbPath);
    assert.ok(before.state.has('fermenter'));

    // When it restarts on a file without the fermenter (loop, its sensor, actuators and plant)
    const withoutFermenter = crashConfigText((doc) => {
      doc.deleteIn(['loops', 'fermenter']);
      doc.deleteIn(['actuators', 'chamber_heater']);
      doc.deleteIn(['actuators', 'chamber_cooler']);
      doc.deleteIn(['sensors', 'chamber_temp']);
      doc.deleteIn(['simulation', 'plants', 'chamber']);
    });
    writeFileSync(configPath, withoutFermenter);
    run = await start(configPath, dbPath);
    assert.equal(
      (await run.daemon.waitForLine(/^config (applied|unchanged)/)).msg,
      'config applied as generation 2',
    );
    await run.daemon.waitForLine('homeostat regulating 2 loop(s)');

    // Then its actuators were driven to their safe state before regulation started
    const safeLines = run.daemon.filter(/→ safe state \(loop fermenter removed\)$/);
    assert.deepEqual(safeLines.map((l: LogLine) => l.msg).sort(), [
      'chamber_cooler → safe state (loop fermenter removed)',
      'chamber_heater → safe state (loop fermenter removed)',
    ]);
    await sleep(300);
    await crash(run);
    const after = snapshot(dbPath);
    assert.deepEqual(after.integrity, ['ok']);
    // And the loop is forgotten: no desired row (not even a pending removal), no memory
    assert.deepEqual(
      after.desired.map((r) => r.loop),
      ['greenhouse_humidity', 'room'],
    );
    assert.equal(after.state.has('fermenter'), false);
    // And the other loops' desired state is untouched (same generation 1: their sections did not change)
    assert.deepEqual(
      after.desired,
      before.desired.filter((r) => r.loop !== 'fermenter'),
    );
    // And the removal is in the event log, in order
    assert.deepEqual(
      after.events
        .filter((e) => e.loop === 'fermenter' && e.kind.startsWith('loop-'))
        .map((e) => [e.kind, e.source]),
      [
        ['loop-added', 'file'],
        ['loop-removed', 'file'],
        ['loop-removed-safe', 'file'],
        ['loop-finalized', null],
      ],
    );

    // When it crashes and restarts on the same file again: nothing is finalized twice
    run = await start(configPath, dbPath);
    assert.equal(
      (await run.daemon.waitForLine(/^config (applied|unchanged)/)).msg,
      'config unchanged: generation 2',
    );
    await run.daemon.waitForLine('homeostat regulating 2 loop(s)');
    assert.deepEqual(run.daemon.filter(/loop fermenter removed/), []);
    await sleep(STOP_GRACE_MS);
    assert.deepEqual(await run.daemon.kill('SIGTERM'), { code: 0, signal: null }, run.daemon.output);
    const again = snapshot(dbPath);
    assert.equal(eventsOf(again, 'loop-removed-safe').length, 1);
    const status = await runCli(['status', '--db', dbPath, '--json']);
    assert.deepEqual(
      (JSON.parse(status.stdout) as LoopReport[]).map((r) => r.loop),
      ['greenhouse_humidity', 'room'],
    );
  });

  test('a removal the crash interrupted (committed, not yet finalized) is finalized at the next start', async (t) => {
    const { configPath, dbPath } = crashFiles(t, 'homeostat-finalize-crash-');
    let run = await start(configPath, dbPath);
    await run.daemon.waitForLine('homeostat regulating 3 loop(s)');
    await sleep(300);
    await crash(run);

    // Given the database as a crash leaves it between applying a file without the greenhouse
    // loop (committed at once) and running its finalizer: the removal is pending
    const withoutGreenhouse = crashConfigText((doc) => {
      doc.deleteIn(['loops', 'greenhouse_humidity']);
      doc.deleteIn(['actuators', 'fogger']);
      doc.deleteIn(['sensors', 'greenhouse_rh']);
      doc.deleteIn(['simulation', 'plants', 'greenhouse_air']);
    });
    const parsed = parseConfigText(withoutGreenhouse);
    assert.ok(parsed.ok);
    const db = new Database(dbPath);
    try {
      const store = { desired: new DesiredStore(db, Date.now), state: new StateStore(db) };
      assert.deepEqual(applyConfig(store, parsed.config, withoutGreenhouse).removedLoops, [
        'greenhouse_humidity',
      ]);
      assert.deepEqual(store.desired.pendingRemovals(), ['greenhouse_humidity']);
    } finally {
      db.close();
    }
    writeFileSync(configPath, withoutGreenhouse);

    // When the daemon starts on that file
    run = await start(configPath, dbPath);
    assert.equal(
      (await run.daemon.waitForLine(/^config (applied|unchanged)/)).msg,
      'config unchanged: generation 2',
    );
    await run.daemon.waitForLine('homeostat regulating 2 loop(s)');
    await sleep(STOP_GRACE_MS);
    assert.deepEqual(await run.daemon.kill('SIGTERM'), { code: 0, signal: null }, run.daemon.output);

    // Then the pending removal is completed: the loop is forgotten
    const after = snapshot(dbPath);
    assert.deepEqual(
      after.desired.map((r) => r.loop),
      ['fermenter', 'room'],
    );
    assert.equal(after.state.has('greenhouse_humidity'), false);
    assert.equal(eventsOf(after, 'loop-finalized', 'greenhouse_humidity').length, 1);
    // … with its actuator driven to the safe state, using the last stored config that still
    // defined the loop (the latest one already removed it).
    assert.ok(run.daemon.find('fogger → safe state (loop greenhouse_humidity removed)'), run.daemon.output);
    assert.equal(eventsOf(after, 'loop-removed-safe', 'greenhouse_humidity').length, 1);
  });
});
