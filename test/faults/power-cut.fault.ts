import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { writeFileDurably } from '../../src/durable-file.js';
import {
  type CliProcess,
  killAll,
  makeTempDir,
  runCli,
  seededRandom,
  sleep,
  startDaemon,
} from '../integration/helpers.js';
import { type Broker, startMosquitto } from '../integration/mosquitto.js';
import { AnswerLedger, type SentChange } from './support/answer-ledger.js';
import { faultConfigText, nextRequestId, resultTopic, setTopic, stateTopic } from './support/config.js';
import { type DesiredRow, desiredRows, hasTable, integrity, movedAside } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { LazyFs, type LazyFsCounts, lazyFsUnavailable } from './support/lazyfs.js';
import { TestMqtt } from './support/mqtt.js';

/**
 * "Power cuts": the daemon's database on a filesystem that loses every write not
 * fsynced when the power goes (support/lazyfs.py), under setpoint and mode commands over MQTT,
 * cut at random moments (a fifth during start-up, the others under traffic) at least 100 times.
 * A cut is a SIGKILL of the daemon and the filesystem's unsynced writes dropped (unmount); the
 * power coming back is the filesystem mounted again with exactly what was fsynced. After each:
 * - `PRAGMA integrity_check` ok, no file moved aside;
 * - every change answered accepted is in the database: each loop's stored setpoint and mode
 *   are the last answered ones (or ones sent after them whose answers the cut swallowed), its
 *   generation at least the answered one's;
 * - the daemon restarted on it publishes states with that setpoint and mode, having acted on
 *   that generation (it regulates from the last answered state).
 * kill -9 alone (kills.fault.ts) cannot show this: the page cache survives a killed process.
 */

const SPEED = 60;
/** Cuts; HOMEOSTAT_FAULT_CUTS overrides (at least 100 for the issue). */
const CUTS = Number(process.env.HOMEOSTAT_FAULT_CUTS ?? 100);
const COMMANDED = ['fermenter', 'room'] as const;
const SETPOINTS = [17, 17.5, 18, 18.5, 19, 19.5, 20, 20.5, 21, 21.5];
/** Modes sent to room with every other setpoint (its heater allows off and heat). */
const ROOM_MODES = ['heat', 'off'];

const unavailable = lazyFsUnavailable();
const skip = unavailable ? `power-cut scenario skipped: ${unavailable}` : false;

/** One scenario's files, broker client, answers and write counts. */
interface CutRun {
  configPath: string;
  dbPath: string;
  stateDir: string;
  mountDir: string;
  client: TestMqtt;
  ledger: AnswerLedger;
  random: () => number;
  counts: LazyFsCounts;
  startupCuts: number;
}

let commandNo = 0;

/** Sends setpoint (and, to room, mode) changes to `loop` one after the other until stopped. */
async function traffic(run: CutRun, loop: string, isRunning: () => boolean): Promise<void> {
  while (isRunning()) {
    commandNo += 1;
    const sent: SentChange = {
      loop,
      setpoint: SETPOINTS[commandNo % SETPOINTS.length]!,
      ...(loop === 'room' ? { mode: ROOM_MODES[Math.floor(commandNo / 2) % 2]! } : {}),
      requestId: nextRequestId(`cut-${loop}`),
    };
    run.ledger.sent(sent);
    const { loop: _, ...payload } = sent;
    const result = await run.client.command(setTopic(loop), JSON.stringify(payload), resultTopic(loop), {
      requestId: sent.requestId,
      timeoutMs: 1_500,
    });
    if (result?.accepted) run.ledger.accepted(sent, result.generation!);
    else if (result) run.ledger.rejected += 1;
    else await sleep(50); // not connected yet, or being cut
  }
}

/**
 * After the power came back: the file is sound (integrity ok, never moved aside), and holds
 * every answered change (counted by the ledger). Returns the stored rows: what each loop must
 * regulate from.
 */
function checkStored(run: CutRun, context: string): Map<string, DesiredRow> {
  let rows = new Map<string, DesiredRow>();
  if (existsSync(run.dbPath)) {
    assert.deepEqual(integrity(run.dbPath), ['ok'], `${context}: PRAGMA integrity_check`);
    assert.deepEqual(movedAside(run.dbPath), [], `${context}: no database moved aside`);
    // Cut while the very first start created the schema, or (synchronous NORMAL) all of it lost.
    if (hasTable(run.dbPath, 'loop_desired')) rows = desiredRows(run.dbPath);
  }
  run.ledger.check(context, rows);
  return rows;
}

/** The restarted daemon publishes the stored (= last answered) setpoint and mode, acted on. */
async function checkRegulatingFrom(
  run: CutRun,
  context: string,
  rows: Map<string, DesiredRow>,
  sinceMs: number,
): Promise<void> {
  for (const loop of COMMANDED) {
    const row = rows.get(loop);
    if (!row) continue;
    await run.client
      .state(
        stateTopic(loop),
        (s) => s.setpoint === row.setpoint && s.mode === row.mode && s.observedGeneration >= row.generation,
        { sinceMs, timeoutMs: 15_000, what: `${loop} regulating at ${row.setpoint} ${row.mode}` },
      )
      .catch((error: Error) => {
        const latest = JSON.stringify(run.client.latestState(stateTopic(loop)));
        throw new Error(`${context}: ${error.message}; last state ${latest}`);
      });
  }
}

function addCounts(run: CutRun, counts: LazyFsCounts): void {
  run.counts.fsyncs += counts.fsyncs;
  run.counts.dirFsyncs += counts.dirFsyncs;
  run.counts.bytesWritten += counts.bytesWritten;
  run.counts.bytesSynced += counts.bytesSynced;
}

/**
 * One power cycle: power on (mount), check what survived, start the daemon, check it regulates
 * from it, send commands, and cut at a random moment: a fifth anywhere in start-up (store
 * opening, migrations, the config applied, first cycles), the others under traffic.
 */
async function powerCycle(run: CutRun, context: string, setLazy: (fs: LazyFs) => void): Promise<void> {
  const lazy = await LazyFs.mount(run.stateDir, run.mountDir);
  setLazy(lazy);
  const rows = checkStored(run, `before ${context}`);
  const spawnedAtMs = Date.now();
  const daemon: CliProcess = startDaemon({
    configPath: run.configPath,
    dbPath: run.dbPath,
    speed: SPEED,
  });
  let running = true;
  let loops: Promise<void>[] = [];
  let exit: Awaited<ReturnType<CliProcess['kill']>>;
  try {
    if (run.random() < 0.2) {
      run.startupCuts += 1;
      loops = COMMANDED.map((loop) => traffic(run, loop, () => running));
      await sleep(run.random() * 2_500);
    } else {
      await daemon.waitForLine(/^homeostat regulating/, 30_000);
      await checkRegulatingFrom(run, context, rows, spawnedAtMs);
      loops = COMMANDED.map((loop) => traffic(run, loop, () => running));
      await sleep(100 + run.random() * 900);
    }
  } finally {
    // The power goes: the process dies with the machine, then the disk keeps only what was fsynced.
    exit = await daemon.kill('SIGKILL');
    running = false;
    await Promise.all(loops);
  }
  assert.equal(exit.signal, 'SIGKILL', `${context}: the daemon exited on its own:\n${daemon.output}`);
  addCounts(run, await lazy.cut());
}

function figuresNote(run: CutRun): string {
  const { ledger, counts } = run;
  return (
    `${ledger.answered} answered changes checked (${ledger.rejected} rejected), ${ledger.lost} lost ` +
    `(at ${ledger.checksWithLoss} cuts), ${run.startupCuts} cuts in start-up, integrity ok ${CUTS}/${CUTS}; ` +
    `write cost ${counts.fsyncs} fsyncs + ${counts.dirFsyncs} directory fsyncs ` +
    `(${(counts.fsyncs / Math.max(1, ledger.answered)).toFixed(2)} per answered change, starts included), ` +
    `${Math.round(counts.bytesWritten / 1024)} KiB written, ${Math.round(counts.bytesSynced / 1024)} KiB made durable`
  );
}

describe('power cuts at random moments under command traffic', () => {
  let broker: Broker | undefined;
  let lazy: LazyFs | undefined;
  after(async () => {
    await killAll();
    await lazy?.dispose();
    await broker?.dispose();
  });

  test(`${CUTS} power cuts: integrity ok, no answered change lost, regulating from it`, {
    timeout: 1_800_000,
    skip,
  }, async (t) => {
    broker = await startMosquitto();
    const { dir, remove } = makeTempDir('homeostat-fault-power-');
    // Unmounted first: removing a mounted directory would fail and leave it behind.
    t.after(async () => {
      await killAll();
      await lazy?.dispose();
      remove();
    });
    const run: CutRun = {
      configPath: join(dir, 'homeostat.yaml'),
      stateDir: join(dir, 'lazyfs'),
      mountDir: join(dir, 'disk'),
      dbPath: join(dir, 'disk', 'state.db'),
      client: await TestMqtt.connect(broker.url, ['homeostat/demo/+/result', 'homeostat/demo/+/state']),
      ledger: new AnswerLedger(COMMANDED, (line) => t.diagnostic(line)),
      random: seededRandom(0x90e7c07),
      counts: { fsyncs: 0, dirFsyncs: 0, bytesWritten: 0, bytesSynced: 0 },
      startupCuts: 0,
    };
    t.after(() => run.client.end());
    mkdirSync(run.stateDir);
    mkdirSync(run.mountDir);
    writeFileSync(run.configPath, faultConfigText({ brokerUrl: broker.url }));
    const startedMs = Date.now();
    for (let cut = 1; cut <= CUTS; cut++) {
      await powerCycle(run, `cut ${cut}/${CUTS}`, (fs) => {
        lazy = fs;
      });
    }

    // The power back once more: the last cut's answers are there, and a clean run regulates on them.
    lazy = await LazyFs.mount(run.stateDir, run.mountDir);
    const rows = checkStored(run, 'after the last cut');
    const spawnedAtMs = Date.now();
    const daemon = startDaemon({ configPath: run.configPath, dbPath: run.dbPath, speed: SPEED });
    await daemon.waitForLine(/^homeostat regulating/, 30_000);
    await checkRegulatingFrom(run, 'after the last cut', rows, spawnedAtMs);
    assert.deepEqual(await daemon.kill('SIGTERM'), { code: 0, signal: null }, daemon.output);
    addCounts(run, await lazy.cut());
    lazy = undefined;

    reportFigures(t, {
      scenario: `${CUTS} × power cut under commands`,
      notes: `${figuresNote(run)}; ${Math.round((Date.now() - startedMs) / 1000)} s`,
    });
    const { ledger } = run;
    assert.ok(ledger.answered >= CUTS, `only ${ledger.answered} changes answered over ${CUTS} cuts`);
    assert.equal(
      ledger.lost,
      0,
      `${ledger.lost} answered changes lost to power cuts (at ${ledger.checksWithLoss} of ${CUTS} cuts)`,
    );
  });
});

describe('power cuts right after a config file was written', () => {
  const mounted: LazyFs[] = [];
  after(async () => {
    for (const fs of mounted) await fs.dispose();
  });

  /** A fresh lazy filesystem: its mount, and `powerCycle` (cut, then mount again). */
  async function lazyDisk(t: TestContext) {
    const { dir, remove } = makeTempDir('homeostat-fault-power-file-');
    const stateDir = join(dir, 'lazyfs');
    const mountDir = join(dir, 'disk');
    mkdirSync(stateDir);
    mkdirSync(mountDir);
    let fs = await LazyFs.mount(stateDir, mountDir);
    mounted.push(fs);
    t.after(async () => {
      await fs.dispose();
      remove();
    });
    return {
      dir,
      mountDir,
      powerCycle: async () => {
        await fs.cut();
        fs = await LazyFs.mount(stateDir, mountDir);
        mounted.push(fs);
      },
      dispose: () => fs.dispose(),
    };
  }

  test('homeostat init: the config is complete after a cut right after init returns', {
    skip,
    timeout: 120_000,
  }, async (t) => {
    const disk = await lazyDisk(t);
    const sysfsRoot = join(disk.dir, 'sys');
    mkdirSync(sysfsRoot);
    const rounds = 3;
    for (let round = 1; round <= rounds; round++) {
      // A directory init makes (as /etc/homeostat on a fresh system), and one that exists.
      const outPath = join(disk.mountDir, round === 1 ? 'etc/homeostat' : '.', `config-${round}.yaml`);
      const init = await runCli([
        'init',
        '--out',
        outPath,
        '--sensor',
        'sim',
        '--yes',
        '--sysfs-root',
        sysfsRoot,
      ]);
      assert.equal(init.code, 0, init.stderr);
      const written = readFileSync(outPath, 'utf8');
      assert.match(written, /loops:/);
      await disk.powerCycle();
      assert.ok(existsSync(outPath), `round ${round}: ${outPath} is gone after the cut`);
      assert.equal(
        readFileSync(outPath, 'utf8'),
        written,
        `round ${round}: ${outPath} is not complete after the cut`,
      );
    }
    await disk.dispose();
    reportFigures(t, {
      scenario: 'power cut right after homeostat init',
      notes: `${rounds}/${rounds} configs complete after the cut (one in a directory init made)`,
    });
  });

  test('writeFileDurably: the new content is there after a cut right after it returns', {
    skip,
    timeout: 60_000,
  }, async (t) => {
    const disk = await lazyDisk(t);
    const path = join(disk.mountDir, 'last-applied.json');
    for (let round = 1; round <= 5; round++) {
      const content = `${JSON.stringify({ round, pins: [17, 27] })}\n`;
      writeFileDurably(path, content);
      await disk.powerCycle();
      assert.equal(readFileSync(path, 'utf8'), content, `round ${round}`);
    }
    await disk.dispose();
  });
});
