import type { Logger } from 'pino';
import type { ConfigResult } from './config/load.js';
import { loopSectionHash } from './config/plan.js';
import type { Config } from './config/schema.js';
import { safeLevelOf, toLoopSpec } from './config/to-loop-spec.js';
import type { LatchedFault } from './core/effect-watch.js';
import type { LoopStatus } from './core/status.js';
import {
  applyConfig,
  CycleRecorder,
  type DaemonStore,
  finalizeRemovedLoops,
  storedLoopState,
} from './daemon-store.js';
import {
  buildDrivers,
  createActuatorDriver,
  createSensorDriver,
  type Drivers,
  driverKey,
} from './drivers/build.js';
import type { LoopControl } from './mqtt/bridge.js';
import { type FaultResetOutcome, NOTHING_LATCHED_REASON } from './mqtt/commands.js';
import { backoffDelayMs } from './runtime/backoff.js';
import { type Clock, shiftDriverTimes, type TimerHandle } from './runtime/clock.js';
import { driveSafe, type SafeStateEvent } from './runtime/drive-safe.js';
import { type CycleDesired, LoopReconciler } from './runtime/loop-reconciler.js';
import { LoopRunner } from './runtime/loop-runner.js';
import { Sampler } from './runtime/sampler.js';
import { formatStatusLine } from './status-line.js';
import { classifyStorageError } from './store/health.js';
import type { LoopLiveness } from './systemd/watchdog.js';

export interface DaemonOptions {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Drivers to use; default built from the config (tests pass their own). */
  drivers?: Drivers;
  /** A cycle runs at least this often even when nothing happens, ms. Default 30 000. */
  resyncMs?: number;
  /** One status line per loop this often (clock time), ms; 0 disables. Default 300 000. */
  statusEveryMs?: number;
  /**
   * Where desired state, memory and history live: the store supervisor in production, an
   * in-memory SQLite store in unit tests (test/support/store.ts). Desired state is read from it
   * every cycle.
   */
  store: DaemonStore;
  /** The config file's text: its hash decides the generation. */
  configText: string;
  /** Batched state is written this often, ms. Default storage.memoryFlushS of the config. */
  flushEveryMs?: number;
  /**
   * Told when loops are added and removed and after each successful cycle (the systemd
   * watchdog gate). A loop must succeed at least every 3 × `resyncMs`.
   */
  liveness?: LoopLiveness;
}

/**
 * What the daemon tells whoever subscribed (the MQTT bridge, tests that record statuses).
 * Subscribers are added after construction: the bridge is built on the running daemon (its
 * control port), so neither needs a lazy reference to the other.
 */
export interface DaemonEvents {
  /** Every loop status, after each cycle. */
  status?(status: LoopStatus): void;
  /** After a reload applied a config (MQTT reconciles discovery and clears removed loops). */
  configApplied?(config: Config, removedLoops: string[]): void;
}

interface RunningLoop {
  id: string;
  cycle: LoopReconciler;
  runner: LoopRunner;
}

/** What a reload did. */
export type ReloadOutcome =
  | { result: 'invalid'; errors: string[] }
  | { result: 'unchanged' }
  | { result: 'applied'; generation: number; added: string[]; changed: string[]; removed: string[] }
  /** The database could not take it: nothing changed; retried after `retryInMs` unless a newer file comes. */
  | { result: 'failed'; error: string; retryInMs: number };

/** Retries of a reload the database could not take: 1 s doubling to 30 s. */
const RELOAD_RETRY = { initialMs: 1_000, maxMs: 30_000 };

/**
 * The loops of one node: the sampler and one runner per loop over the node's drivers and
 * store; starts them in order and stops them in reverse, ending with every actuator at its safe
 * state. A reload applies a new config without touching the loops it does not change. Built by
 * the node (src/node.ts), which owns the store, the MQTT bridge and the watchdog gate around it.
 */
export class Daemon implements LoopControl {
  readonly drivers: Drivers;
  private config: Config;
  private readonly sampler: Sampler;
  private readonly loops = new Map<string, RunningLoop>();
  private readonly recorder: CycleRecorder;
  private readonly subscribers = new Set<DaemonEvents>();
  private flushTimer: TimerHandle | undefined;
  private pruneTimer: TimerHandle | undefined;
  private statusTimer: TimerHandle | undefined;
  private started = false;
  private stopped = false;
  /** The running config's text (written into a fresh database on recovery). */
  private configText: string;
  /** Reloads run one at a time, in order (a retry included). */
  private reloadChain: Promise<unknown> = Promise.resolve();
  /** Number of the newest reload asked for: a retry of an older one is dropped. */
  private reloadSeq = 0;
  private reloadRetryTimer: TimerHandle | undefined;
  /** Flushes failing in a row (logged once per streak). */
  private flushFailures = 0;
  private stopClockSteps: (() => void) | undefined;

  constructor(private readonly opts: DaemonOptions) {
    const { config, clock, logger } = opts;
    this.config = config;
    this.configText = opts.configText;
    this.drivers = opts.drivers ?? buildDrivers(config, () => clock.nowMs());
    this.recorder = new CycleRecorder(opts.store);
    this.superviseStore();
    this.sampler = new Sampler({
      clock,
      logger: logger.child({ component: 'sampler' }),
      sensors: this.sampledSensors(),
      onReading: (sensorId) => this.triggerLoopsOf(sensorId, 'reading'),
    });
    this.listenToPushSensors();
  }

  /** Adds an event sink; returns what removes it (a bridge that could not start). */
  subscribe(sink: DaemonEvents): () => void {
    this.subscribers.add(sink);
    return () => this.subscribers.delete(sink);
  }

  async start(): Promise<void> {
    this.stopClockSteps = this.opts.clock.onStep?.((deltaMs) => this.onClockStep(deltaMs));
    for (const driver of [...this.drivers.sensors.values(), ...this.drivers.actuators.values()]) {
      await driver.start?.();
    }
    await this.applyStartConfig();
    for (const id of Object.keys(this.config.loops)) this.addLoop(id);
    this.sampler.start();
    for (const loop of this.loops.values()) loop.runner.start();
    this.started = true;
    this.scheduleStatusLines();
    this.scheduleFlushes();
    this.schedulePruning();
    this.opts.logger.info(
      { loops: [...this.loops.keys()], node: this.config.node.id },
      `homeostat regulating ${this.loops.size} loop(s)`,
    );
  }

  /** Stops in reverse order and leaves every actuator at its safe state. Safe to call twice. */
  async stop(reason = 'shutdown'): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopClockSteps?.();
    if (this.statusTimer) this.opts.clock.clearTimer(this.statusTimer);
    if (this.flushTimer) this.opts.clock.clearTimer(this.flushTimer);
    if (this.pruneTimer) this.opts.clock.clearTimer(this.pruneTimer);
    if (this.reloadRetryTimer) this.opts.clock.clearTimer(this.reloadRetryTimer);
    // A reload in progress finishes first (it checks `stopped` between its steps), so it cannot
    // start a loop or a driver after the actuators were driven safe.
    await this.reloadChain;
    const loops = [...this.loops.values()];
    await Promise.allSettled(loops.map((loop) => loop.runner.stop()));
    await this.sampler.stop().catch((error) => this.opts.logger.error({ err: error }, 'sampler stop failed'));
    // Every loop at once: a device that hangs (a plug waiting for its broker) delays no other.
    await Promise.all(
      loops.map((loop) =>
        loop.cycle.driveSafe(reason, {
          recordEvent: (event) => this.recordSafeEvent(event),
          eventSource: reason,
        }),
      ),
    );
    this.flush();
    for (const driver of [...this.drivers.actuators.values(), ...this.drivers.sensors.values()].reverse()) {
      await driver
        .stop?.()
        .catch((error) => this.opts.logger.error({ err: error, driver: driver.id }, 'stop failed'));
    }
    this.opts.logger.info('homeostat stopped; actuators at their safe state');
  }

  /**
   * Applies a reloaded config file (SIGHUP, file change). An invalid file changes nothing but
   * the `ConfigValid` condition, which lists its `path: message` errors; the last good config
   * keeps running. A valid one becomes the next generation: loops whose settings are the same
   * keep running untouched (setpoint and mode changes reach them through the store), changed
   * loops switch bumplessly to their new settings, added loops start and removed loops go
   * through their finalizer.
   */
  async reload(loaded: ConfigResult): Promise<ReloadOutcome> {
    const seq = ++this.reloadSeq;
    // A newer file supersedes the retry of an older one.
    if (this.reloadRetryTimer) this.opts.clock.clearTimer(this.reloadRetryTimer);
    this.reloadRetryTimer = undefined;
    return this.enqueueReload(loaded, seq, 0);
  }

  private enqueueReload(loaded: ConfigResult, seq: number, failures: number): Promise<ReloadOutcome> {
    const run = this.reloadChain.then(() => this.reloadNow(loaded, seq, failures));
    // One failed reload must not stop the later ones.
    this.reloadChain = run.catch(() => undefined);
    return run;
  }

  /**
   * One reload attempt. The database is written first (one transaction): if it cannot take the
   * config (locked, full), nothing at all has changed — the loops run the previous config — and
   * the attempt is retried with backoff; a newer file supersedes it.
   */
  private async reloadNow(loaded: ConfigResult, seq: number, failures: number): Promise<ReloadOutcome> {
    if (this.stopped) return { result: 'unchanged' };
    const nowMs = this.opts.clock.nowMs();
    if (!loaded.ok) {
      const message = `config file invalid, still running the last good one: ${loaded.errors.join('; ')}`;
      for (const loop of this.loops.values()) loop.cycle.setConfigValidity(false, message, nowMs);
      this.opts.logger.error({ errors: loaded.errors }, 'reload: config invalid, keeping the running one');
      return { result: 'invalid', errors: loaded.errors };
    }
    const before = this.config;
    const next = loaded.config;
    const unchanged = (id: string) =>
      before.loops[id] !== undefined && loopSectionHash(before, id) === loopSectionHash(next, id);
    const added = Object.keys(next.loops).filter((id) => !before.loops[id]);
    const removed = Object.keys(before.loops).filter((id) => !next.loops[id]);
    const changed = Object.keys(next.loops).filter((id) => before.loops[id] && !unchanged(id));

    let stored: { generation: number; changed: boolean };
    try {
      stored = this.storeConfig(next, loaded.text);
    } catch (error) {
      return this.reloadFailed(loaded, seq, failures, error, nowMs);
    }
    if (failures > 0)
      this.opts.logger.info({ attempts: failures + 1 }, 'reload: the database took the config');
    this.config = next;
    this.configText = loaded.text;
    await this.finalizeRemovals(before);
    // Whatever the store could say: a loop gone from the file stops, its actuators safe.
    await this.stopRemovedLoops(removed);
    await this.replaceChangedDrivers(before, next);
    if (this.stopped) return { result: 'unchanged' };
    this.sampler.reconfigure(this.sampledSensors());
    this.listenToPushSensors();
    for (const id of changed) {
      this.loops.get(id)?.cycle.updateSpec(toLoopSpec(next, id));
      this.loops.get(id)?.runner.trigger('config');
    }
    for (const id of added) {
      this.addLoop(id);
      if (this.started && !this.stopped) this.loops.get(id)?.runner.start();
    }
    for (const loop of this.loops.values()) loop.cycle.setConfigValidity(true, 'config applied', nowMs);
    // Setpoint/mode edits reach unchanged loops through the store; wake them so they act now.
    for (const loop of this.loops.values()) loop.runner.trigger('config');
    if (added.length + changed.length + removed.length === 0 && !stored.changed) {
      return { result: 'unchanged' };
    }
    for (const sink of this.subscribers) sink.configApplied?.(next, removed);
    const { generation } = stored;
    this.opts.logger.info({ added, changed, removed, generation }, 'reload: config applied');
    return { result: 'applied', generation, added, changed, removed };
  }

  /** The database refused a reload: say so on every loop and retry it with backoff. */
  private reloadFailed(
    loaded: ConfigResult,
    seq: number,
    failures: number,
    error: unknown,
    nowMs: number,
  ): ReloadOutcome {
    const attempt = failures + 1;
    const retryInMs = backoffDelayMs(attempt, RELOAD_RETRY);
    const reason = error instanceof Error ? error.message : String(error);
    const message = `config file valid but not applied yet: the database could not store it (${reason}); still running the previous config, retrying`;
    for (const loop of this.loops.values()) loop.cycle.setConfigValidity(false, message, nowMs, 'NotApplied');
    // Once per streak: the store logs the storage failure itself.
    if (failures === 0) this.opts.logger.error({ err: error }, `reload: ${message}`);
    if (!this.stopped && seq === this.reloadSeq) {
      this.reloadRetryTimer = this.opts.clock.setTimer(() => {
        this.reloadRetryTimer = undefined;
        if (seq === this.reloadSeq && !this.stopped) void this.enqueueReload(loaded, seq, attempt);
      }, retryInMs);
    }
    return { result: 'failed', error: reason, retryInMs };
  }

  /** Writes batched state; a storage failure is logged, never stops regulation. */
  flush(): void {
    const store = this.opts.store;
    try {
      store.state.flush();
      if (this.flushFailures > 0 && !store.health) {
        this.opts.logger.info({ failures: this.flushFailures }, 'loop state written to the database again');
      }
      this.flushFailures = 0;
    } catch (error) {
      this.flushFailures++;
      // Once per streak of failures, never once per flush; a supervised store logs it itself.
      const once = this.flushFailures === 1 && !store.health;
      if (once)
        this.opts.logger.error({ err: error }, 'could not write loop state to the database; will retry');
      else this.opts.logger.debug({ err: error }, 'loop state still not written; will retry');
    }
    try {
      store.check?.();
    } catch (error) {
      // Reported (and a damaged file recovered) by the store itself.
      this.opts.logger.debug({ err: error }, 'desired state could not be read back');
    }
  }

  /**
   * A person's fault reset (MQTT fault/reset, the Home Assistant button), as desired state:
   * committed to the store with the next generation and its 'fault-reset' event before it is
   * answered, so a crash right after cannot bring the latch back; the loop applies it at its
   * next cycle (and again after a crash), to a fault latched at or before `requestedAtMs`
   * (clock time the reset was received). Refused, changing nothing, when no such fault is
   * latched or the database cannot take it: the sender is told why.
   */
  requestFaultReset(
    loopId: string,
    source: string,
    requestedAtMs: number,
    requestId?: string,
  ): FaultResetOutcome {
    const loop = this.loops.get(loopId);
    if (!loop) return { accepted: false, reason: `unknown loop "${loopId}"` };
    const current = loop.cycle.status?.generation;
    const unchanged = current === undefined ? {} : { generation: current };
    const fault = loop.cycle.latchedFaultAt(requestedAtMs);
    if (!fault) return { accepted: false, reason: NOTHING_LATCHED_REASON, ...unchanged };
    let generation: number;
    try {
      ({ generation } = this.opts.store.desired.resetFault(loopId, {
        requestedAtMs,
        source,
        fault: fault.reason,
        ...(requestId === undefined ? {} : { requestId }),
      }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.opts.logger.warn({ err: error, loop: loopId }, `fault reset not stored: ${message}`);
      return { accepted: false, reason: `not stored: ${message}`, ...unchanged };
    }
    loop.runner.trigger('fault reset');
    return { accepted: true, generation };
  }

  /** The one event of a drive to the safe state (runtime/drive-safe.ts). */
  private recordSafeEvent(event: SafeStateEvent): void {
    // A supervised store defers an event it cannot write now; driveSafe logs one that throws.
    this.opts.store.desired.recordEvent(event);
  }

  /** Asks a loop for a cycle now (a command changed its desired state); unknown loops are ignored. */
  triggerLoop(id: string, reason: string): void {
    this.loops.get(id)?.runner.trigger(reason);
  }

  /** The config in force (it changes on reload). */
  currentConfig(): Config {
    return this.config;
  }

  statuses(): LoopStatus[] {
    return [...this.loops.values()].flatMap((loop) => (loop.cycle.status ? [loop.cycle.status] : []));
  }

  /**
   * Writes `config` (text `text`) as desired state (same text, same generation). Returns the
   * generation in force and whether the config changed. Throws when the database cannot take
   * it, having changed nothing.
   */
  private storeConfig(config: Config, text: string): { generation: number; changed: boolean } {
    const { store, logger } = this.opts;
    const applied = applyConfig(store, config, text);
    logger.info(
      { generation: applied.generation, changed: applied.changed },
      applied.changed
        ? `config applied as generation ${applied.generation}`
        : `config unchanged: generation ${applied.generation}`,
    );
    return { generation: applied.generation, changed: applied.changed };
  }

  /**
   * The config at start. A database that cannot take it (a full disk under an existing file)
   * does not stop the start: a supervised store regulates on its in-memory stand-in, from the
   * config, and tries the file again later.
   */
  private async applyStartConfig(): Promise<void> {
    const { store } = this.opts;
    try {
      this.storeConfig(this.config, this.configText);
    } catch (error) {
      if (!store.fallBackToStandIn || classifyStorageError(error) === undefined) throw error;
      store.fallBackToStandIn(error);
    }
    await this.finalizeRemovals();
  }

  /**
   * Runs the finalizer of every loop the store has pending removal (also those a crash
   * interrupted). `previous`: the config before a reload, which describes the removed loops'
   * actuators. A store that cannot say which are pending leaves them for the next reload or start.
   */
  private async finalizeRemovals(previous?: Config): Promise<void> {
    const { store, logger, clock } = this.opts;
    let pending: string[];
    try {
      pending = store.desired.pendingRemovals();
    } catch (error) {
      logger.error({ err: error }, 'removed loops cannot be read from the database now; finalized later');
      return;
    }
    for (const id of pending) await this.removeLoop(id);
    await finalizeRemovedLoops(store, pending, this.drivers, () => clock.nowMs(), logger, previous);
  }

  /**
   * Loops removed from the file that are still running (the store could not say which removals
   * are pending): stopped, with their actuators safe. The store's finalizer records the removal
   * when it can.
   */
  private async stopRemovedLoops(removed: string[]): Promise<void> {
    for (const id of removed) {
      const loop = this.loops.get(id);
      if (!loop) continue;
      await this.removeLoop(id);
      await loop.cycle.driveSafe(`loop ${id} removed`, {
        recordEvent: (event) => this.recordSafeEvent(event),
        eventKind: 'loop-removed-safe',
        eventSource: 'file',
      });
    }
  }

  /** Stops a running loop's runner (its finalizer drives the actuators safe). */
  private async removeLoop(id: string): Promise<void> {
    const loop = this.loops.get(id);
    if (!loop) return;
    this.loops.delete(id);
    this.opts.liveness?.removeLoop(id);
    await loop.runner.stop();
  }

  /**
   * Drivers whose own settings changed are replaced (the old actuator first driven to the safe
   * state); drivers that only changed loop-level settings (timing, safe state) keep running.
   */
  private async replaceChangedDrivers(before: Config, next: Config): Promise<void> {
    const nowMs = () => this.opts.clock.nowMs();
    const { logger } = this.opts;
    const stillDriven = drivenActuators(next);
    const hasOldDriver = (id: string) => before.actuators[id] !== undefined && this.drivers.actuators.has(id);
    const target = (id: string) => ({
      id,
      safeLevel: safeLevelOf(before.actuators[id]!),
      driver: this.drivers.actuators.get(id),
    });
    // Actuators no loop drives any more (deleted, or a loop now uses another one) would stay
    // where they were — a heater on; those whose driver is replaced are left safe by the old
    // driver. Both first and all at once: a device that cannot be reached delays no other and
    // does not abort the reload (a new driver is commanded by its loop's next cycle).
    const orphaned = [...drivenActuators(before)].filter((id) => !stillDriven.has(id) && hasOldDriver(id));
    const replaced = Object.entries(next.actuators)
      .filter(([id, section]) => {
        const old = before.actuators[id];
        return !(old && driverKey(old) === driverKey(section) && this.drivers.actuators.has(id));
      })
      .map(([id]) => id);
    const event = { recordEvent: (e: SafeStateEvent) => this.recordSafeEvent(e), eventSource: 'file' };
    await Promise.all([
      driveSafe(orphaned.map(target), { reason: 'no loop drives it any more', logger, ...event }),
      driveSafe(replaced.filter((id) => hasOldDriver(id) && !orphaned.includes(id)).map(target), {
        reason: 'driver replaced on reload',
        logger,
        ...event,
      }),
    ]);
    for (const id of replaced) {
      const previous = this.drivers.actuators.get(id);
      if (previous && before.actuators[id]) {
        await previous
          .stop?.()
          .catch((error) => logger.error({ err: error, actuator: id }, `${id}: old driver did not stop`));
      }
      try {
        const driver = createActuatorDriver(next, id, this.drivers, nowMs);
        await driver.start?.();
        this.drivers.actuators.set(id, driver);
      } catch (error) {
        // Its loop's writes fail ("no driver") and are reported; the other actuators regulate.
        this.drivers.actuators.delete(id);
        logger.error({ err: error, actuator: id }, `${id}: driver could not start on reload`);
      }
    }
    for (const id of Object.keys(before.actuators)) {
      if (next.actuators[id]) continue;
      await this.drivers.actuators.get(id)?.stop?.();
      this.drivers.actuators.delete(id);
    }
    for (const [id, section] of Object.entries(next.sensors)) {
      const old = before.sensors[id];
      if (old && driverKey(old) === driverKey(section) && this.drivers.sensors.has(id)) continue;
      await this.drivers.sensors.get(id)?.stop?.();
      try {
        const driver = createSensorDriver(next, id, this.drivers, nowMs);
        await driver.start?.();
        this.drivers.sensors.set(id, driver);
      } catch (error) {
        // No reading: its loops go safe (missing reading) and say why.
        this.drivers.sensors.delete(id);
        this.opts.logger.error({ err: error, sensor: id }, `${id}: driver could not start on reload`);
      }
    }
    for (const id of Object.keys(before.sensors)) {
      if (next.sensors[id]) continue;
      await this.drivers.sensors.get(id)?.stop?.();
      this.drivers.sensors.delete(id);
    }
  }

  /**
   * The wall clock stepped by `deltaMs` (NTP, `date -s`): every remembered time — loop memory,
   * readings, drivers' and simulated plants' times — moves by the same amount, so no duration
   * counts the step (a forward step is not hours of heating without effect, a step back does
   * not hold minimum times for hours). Records already written keep their times. Called from
   * inside a clock read: only moves times here; the loops run afterwards, to re-plan their
   * wake-ups on the new time.
   */
  private onClockStep(deltaMs: number): void {
    this.sampler.shiftTimes(deltaMs);
    for (const plant of this.drivers.plants.values()) plant.shiftTimes(deltaMs);
    for (const driver of this.drivers.actuators.values()) shiftDriverTimes(driver, deltaMs);
    for (const loop of this.loops.values()) {
      loop.cycle.shiftTimes(deltaMs);
      loop.runner.shiftTimes(deltaMs);
    }
    this.opts.logger.warn(
      { deltaMs },
      `wall clock stepped ${deltaMs > 0 ? 'forward' : 'back'} by ${Math.abs(deltaMs) / 1000} s; ` +
        'timers and durations are unaffected',
    );
    queueMicrotask(() => {
      for (const loop of this.loops.values()) loop.runner.trigger('clock step');
    });
  }

  /** A push driver's new value is sampled at once (and so reaches its loops at once). */
  private listenToPushSensors(): void {
    for (const [id, driver] of this.drivers.sensors) driver.onValue?.(() => this.sampler.readNow(id));
  }

  /** Every sensor with a driver (one whose driver could not start has none: never read). */
  private sampledSensors() {
    return Object.entries(this.config.sensors).flatMap(([id, sensor]) => {
      const driver = this.drivers.sensors.get(id);
      return driver ? [{ driver, periodMs: sensor.periodS * 1000 }] : [];
    });
  }

  private addLoop(id: string): void {
    const { clock, logger, store } = this.opts;
    const loopLogger = logger.child({ loop: id });
    // Level-based: desired state is read from the store every cycle, so a change committed by
    // any writer (MQTT, a reload) is picked up by the next cycle.
    const desired = (): CycleDesired => {
      const row = store.desired.desired(id);
      if (!row) throw new Error(`loop ${id}: no desired state in the store`);
      const { generation, setpoint, mode, faultReset } = row;
      return { generation, setpoint, mode, ...(faultReset === undefined ? {} : { faultReset }) };
    };
    const cycle = new LoopReconciler({
      spec: toLoopSpec(this.config, id),
      desired,
      ...storedLoopState(store, id, loopLogger),
      onCycle: (completed) => {
        try {
          this.recorder.record(completed);
        } catch (error) {
          // Buffering history must never fail a cycle that has acted.
          loopLogger.error({ err: error }, 'could not record the cycle');
        }
        // A fault latched in this cycle is rare, critical state: written at once, not batched
        // (a crash must not lose it). A reset needs no such write: it is desired state.
        if (completed.memory.latchedFault?.atMs === completed.nowMs) this.flush();
      },
      interlockReadings: () =>
        Object.fromEntries(
          (this.config.loops[id]?.interlocks ?? []).map((interlock) => [
            interlock.sensor,
            this.sampler.latest(interlock.sensor),
          ]),
        ),
      latestReading: () => {
        const sensor = this.config.loops[id]?.sensor;
        return sensor === undefined ? undefined : this.sampler.latestForLoop(sensor);
      },
      actuators: this.drivers.actuators,
      clock,
      logger: loopLogger,
      onStatus: (status) => {
        for (const sink of this.subscribers) sink.status?.(status);
      },
    });
    const resyncMs = this.opts.resyncMs ?? 30_000;
    const runner = new LoopRunner({
      name: id,
      clock,
      cycle: () => cycle.run(),
      resyncMs,
      backoff: { initialMs: 1_000, maxMs: 60_000 },
      logger: loopLogger,
      onCycleSuccess: () => this.opts.liveness?.cycleSucceeded(id),
    });
    // Three missed resyncs before the watchdog gives up on the loop: a failure streak backs off
    // to 60 s at most, so one streak of retries does not restart the daemon, a hung cycle does.
    this.opts.liveness?.addLoop(id, 3 * resyncMs);
    const health = store.health?.();
    if (health) cycle.setStorageHealth(health, clock.nowMs());
    this.loops.set(id, { id, cycle, runner });
  }

  /**
   * With a supervised store: every loop shows the database's health (StorageHealthy), and a
   * fresh or reopened database is given the running config and the loops' memory.
   */
  private superviseStore(): void {
    const store = this.opts.store;
    store.attach?.({
      applyConfig: (target) => applyConfig({ ...store, desired: target }, this.config, this.configText),
      loops: () =>
        [...this.loops.values()].map((loop) => ({
          loop: loop.id,
          memory: loop.cycle.loopMemory,
          status: loop.cycle.status,
          atMs: this.opts.clock.nowMs(),
        })),
      adoptLatchedFault: (id, fault) => {
        const loop = this.loops.get(id);
        if (!loop?.cycle.adoptLatchedFault(fault as LatchedFault)) return;
        this.opts.logger.warn(
          { loop: id, fault },
          `${id}: latched fault found in the database; holding the loop safe`,
        );
        loop.runner.trigger('latched fault');
      },
    });
    store.onHealthChange?.((health) => {
      const nowMs = this.opts.clock.nowMs();
      for (const loop of this.loops.values()) {
        loop.cycle.setStorageHealth(health, nowMs);
        // A recovered database may have renumbered generations: the loops pick them up now.
        if (health.healthy) loop.runner.trigger('storage');
      }
    });
  }

  private triggerLoopsOf(sensorId: string, reason: string): void {
    for (const loop of this.loops.values()) {
      const config = this.config.loops[loop.id];
      // Its own sensor, or an interlock: a window opening pauses the loop at once.
      if (config?.sensor === sensorId || config?.interlocks.some((i) => i.sensor === sensorId)) {
        loop.runner.trigger(reason);
      }
    }
  }

  private scheduleFlushes(): void {
    const everyMs = this.opts.flushEveryMs ?? this.config.storage.memoryFlushS * 1000;
    const tick = () => {
      this.flush();
      this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
  }

  /** History retention now and every hour; a failure is logged and retried next hour. */
  private schedulePruning(): void {
    const store = this.opts.store;
    if (!store.prune) return;
    const tick = () => {
      try {
        // Called on the store (a method of the supervisor, not a free function).
        store.prune?.(this.opts.clock.nowMs());
      } catch (error) {
        // A supervised store logs storage failures once per streak itself.
        const log = store.health ? 'debug' : 'error';
        this.opts.logger[log]({ err: error }, 'history retention failed; will retry in an hour');
      }
      this.pruneTimer = this.opts.clock.setTimer(tick, 3_600_000);
    };
    tick();
  }

  private scheduleStatusLines(): void {
    const everyMs = this.opts.statusEveryMs ?? 300_000;
    if (everyMs <= 0) return;
    const tick = () => {
      for (const loop of this.loops.values()) {
        const status = loop.cycle.status;
        if (!status) continue;
        const unit = this.config.loops[loop.id]?.unit ?? '';
        this.opts.logger.info({ status }, formatStatusLine(status, unit));
      }
      this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
  }
}

/** The actuators some loop of `config` drives (raise or lower). */
function drivenActuators(config: Config): Set<string> {
  return new Set(
    Object.values(config.loops).flatMap((loop) => [loop.raise, loop.lower].filter((id) => id !== undefined)),
  );
}
