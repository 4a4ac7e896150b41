import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { type CliProcess, type LogLine, makeTempDir } from '../../integration/helpers.js';
import { type Broker, startMosquitto } from '../../integration/mosquitto.js';
import { BASE, LOOPS, stateTopic } from './config.js';
import { type ProbedDaemon, startProbedDaemon } from './daemon.js';
import { condition, TestMqtt } from './mqtt.js';

/**
 * Per-test resources of the fault scenarios, released in reverse order of acquisition (the
 * daemon before its broker, the broker before its directory), whatever the outcome.
 */
export class Resources {
  private readonly cleanups: Array<() => unknown> = [];

  constructor(t: TestContext) {
    t.after(async () => {
      for (const cleanup of this.cleanups.reverse()) {
        try {
          await cleanup();
        } catch {
          // keep releasing the rest
        }
      }
    });
  }

  add(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  tempDir(prefix: string): string {
    const { dir, remove } = makeTempDir(prefix);
    this.add(remove);
    return dir;
  }

  async broker(): Promise<Broker> {
    const broker = await startMosquitto();
    this.add(() => broker.dispose());
    return broker;
  }

  /** A test client subscribed to every homeostat topic (states, results, availability). */
  async observer(broker: Broker, extra: string[] = []): Promise<TestMqtt> {
    const client = await TestMqtt.connect(broker.url, [`${BASE}/#`, ...extra]);
    this.add(() => client.end());
    return client;
  }

  daemon(run: CliProcess): CliProcess {
    this.add(() => run.kill('SIGKILL'));
    return run;
  }

  /**
   * A tmpfs of `sizeBytes` mounted on a new directory (we run as root in CI and here); undefined
   * when mounting is not permitted, so the test can skip and say why.
   */
  tmpfs(sizeBytes: number): string | undefined {
    const parent = this.tempDir('homeostat-fault-tmpfs-');
    const dir = join(parent, 'mnt');
    mkdirSync(dir);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    } catch {
      return undefined;
    }
    this.add(() => execFileSync('umount', ['-l', dir], { stdio: 'pipe' }));
    return dir;
  }
}

/** A private broker with an observer on it, and a temp dir for the daemon's config and database. */
export interface ScenarioPlace {
  broker: Broker;
  /** Subscribed to every homeostat topic and the `observe` topics. */
  client: TestMqtt;
  dir: string;
  /** `<dir>/homeostat.yaml`: the scenario writes it before starting the daemon. */
  configPath: string;
  /** `<dir>/state.db`. */
  dbPath: string;
}

/**
 * Acquires the scenario's broker, observer and temp dir (named `<prefix>…`) on `res`, in that
 * order, so they are released in reverse: the directory first, the broker last.
 */
export async function scenarioPlace(
  res: Resources,
  prefix: string,
  observe: string[] = [],
): Promise<ScenarioPlace> {
  const broker = await res.broker();
  const client = await res.observer(broker, observe);
  const dir = res.tempDir(prefix);
  return { broker, client, dir, configPath: join(dir, 'homeostat.yaml'), dbPath: join(dir, 'state.db') };
}

/** The opening of most scenarios: its resources, its verdicts, and {@link scenarioPlace}. */
export async function openScenario(
  t: TestContext,
  prefix: string,
  observe: string[] = [],
): Promise<ScenarioPlace & { res: Resources; v: Verdicts }> {
  const res = new Resources(t);
  const v = new Verdicts();
  return { res, v, ...(await scenarioPlace(res, prefix, observe)) };
}

export interface RegulatingStart {
  speed: number;
  /** The loops whose state shows the bridge ready; default every loop of the demo. */
  loops?: readonly string[];
  /** Database elsewhere than the place's (a tmpfs). */
  dbPath?: string;
  /** Names the probe files (several runs in one directory). */
  name?: string;
  steppableClock?: boolean;
}

/**
 * Starts the probed daemon on the place's config (killed at the release) and resolves once it
 * says it regulates and every loop of `loops` has published its state: commands sent now are heard.
 */
export async function startRegulating(
  res: Resources,
  place: ScenarioPlace,
  opts: RegulatingStart,
): Promise<ProbedDaemon> {
  const daemon = startProbedDaemon({
    configPath: place.configPath,
    dbPath: opts.dbPath ?? place.dbPath,
    speed: opts.speed,
    dir: place.dir,
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.steppableClock ? { steppableClock: true } : {}),
  });
  res.daemon(daemon.run);
  await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
  await bridgeReady(place.client, opts.loops ?? LOOPS);
  return daemon;
}

/** A daemon log line that writes an actuator (`room_heater → ON (…)`, `fogger → 42.5 % (…)`). */
export const ACTUATOR_LINE = /^\S+ → (ON|OFF|-?[\d.]+ %) \(/;

/** Actuator lines logged in [fromMs, toMs] (pino's wall-clock `time`). */
export function actuatorLines(run: CliProcess, fromMs: number, toMs = Number.POSITIVE_INFINITY): LogLine[] {
  return run.filter((line) => ACTUATOR_LINE.test(line.msg) && line.time >= fromMs && line.time <= toMs);
}

/** Log lines at error level or worse (pino: 50 error, 60 fatal) in [fromMs, toMs]. */
export function errorLines(run: CliProcess, fromMs: number, toMs = Number.POSITIVE_INFINITY): LogLine[] {
  return run.filter((line) => line.level >= 50 && line.time >= fromMs && line.time <= toMs);
}

/**
 * Fills the filesystem holding `dir` to the last byte with a file `name` (written until ENOSPC);
 * returns its path (delete it to free the space).
 */
export function fillDisk(dir: string, name = 'filler'): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size = Math.floor(size / 2); // the last few blocks, in smaller writes
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

export function freeDisk(fillerPath: string): void {
  rmSync(fillerPath, { force: true });
}

/**
 * Resolves once every loop's state has been published: the daemon's MQTT side is connected and
 * subscribed (its commands are subscribed before it connects), so commands sent now are heard.
 */
export async function bridgeReady(
  client: TestMqtt,
  loops: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  await Promise.all(
    loops.map((loop) =>
      client.first(
        (m) => m.topic === `${BASE}/${loop}/state` && m.payload.byteLength > 0,
        timeoutMs,
        `${loop} state`,
      ),
    ),
  );
}

/**
 * Runs `checks` collecting every assertion that fails instead of stopping at the first, so a
 * scenario can print its figures first and then report all it found broken at once.
 */
export class Verdicts {
  private readonly failures: string[] = [];

  check(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async checkAsync(what: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  get failed(): boolean {
    return this.failures.length > 0;
  }

  /** Throws one error listing every failed check. */
  settle(): void {
    if (this.failures.length > 0) {
      throw new Error(`${this.failures.length} check(s) failed:\n- ${this.failures.join('\n- ')}`);
    }
  }
}

/**
 * The loop's latest state arrived within the last 3 s (the heartbeat is 1 s of wall time at
 * --speed 60) and says Reconciled True: its cycles run and succeed. The evidence of "still
 * regulating" over short windows, where relays may simply have had no reason to switch.
 */
export function assertFreshlyReconciled(client: TestMqtt, loop: string): void {
  const latest = client.latestStateMessage(stateTopic(loop));
  assert.ok(latest, `no state of ${loop}`);
  const ageMs = Date.now() - latest.atMs;
  assert.ok(ageMs < 3_000, `last state of ${loop} arrived ${ageMs} ms ago`);
  assert.equal(
    condition(latest.state, 'Reconciled')?.status,
    'True',
    JSON.stringify(condition(latest.state, 'Reconciled')),
  );
}

/** Remounts a tmpfs made by `Resources.tmpfs` read-only or read-write (an unwritable directory). */
export function remount(dir: string, mode: 'ro' | 'rw'): void {
  execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
}
