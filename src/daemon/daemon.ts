import type { ConfigResult } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { toLoopSpec } from '../config/to-loop-spec.js';
import type { FaultResetOutcome } from '../control/commands.js';
import type { LoopStatus } from '../core/status.js';
import { buildDrivers, type Drivers } from '../kinds/build.js';
import type { LoopControl } from '../mqtt/bridge.js';
import type { SafeStateEvent } from '../runtime/drive-safe.js';
import type { NodeHealth } from '../runtime/loop-reconciler.js';
import { Sampler } from '../runtime/sampler.js';
import { classifyStorageError } from '../store/health.js';
import { shiftRunningTimes } from './clock-step.js';
import { CycleRecorder } from './cycle-recorder.js';
import { replaceChangedDrivers } from './driver-replacement.js';
import { requestFaultReset } from './fault-reset.js';
import { buildRunningLoop, type RunningLoop } from './loop-factory.js';
import { LoopRemoval } from './loop-removal.js';
import { loopsDrivingActuator, loopsReadingSensor } from './loop-triggers.js';
import type { DaemonEvents, DaemonOptions } from './options.js';
import { RecordedValues } from './recorded-values.js';
import { loopChanges, type ReloadOutcome, ReloadQueue, type StoredConfig } from './reload.js';
import { applyConfig } from './store.js';
import { superviseStore } from './store-supervision.js';
import { DaemonTimers } from './timers.js';

/** Node conditions set from outside the daemon: the HTTP server's, the broker presence's, the alerts'. */
type ExternalNodeCondition = 'ApiServing' | 'NodeIdUnique' | 'AlertsDelivering';

export type { DaemonEvents, DaemonOptions } from './options.js';
export type { ReloadOutcome } from './reload.js';

/**
 * The loops of one node: the sampler and one runner per loop over the node's drivers and
 * store; starts them in order and stops them in reverse, ending with every actuator at its safe
 * state. A reload applies a new config without touching the loops it does not change. Built by
 * the node (src/node.ts), which owns the store, the MQTT bridge and the watchdog gate around it.
 *
 * A coordinator: how a loop is built (loop-factory.ts), the reload protocol (reload.ts), driver
 * replacement (driver-replacement.ts), removed loops (loop-removal.ts), the periodic work
 * (timers.ts), the store's supervision (store-supervision.ts), fault resets (fault-reset.ts)
 * and clock steps (clock-step.ts) live in their own files.
 */
export class Daemon implements LoopControl {
  readonly drivers: Drivers;
  private config: Config;
  private readonly sampler: Sampler;
  private readonly loops = new Map<string, RunningLoop>();
  private readonly recorder: CycleRecorder;
  /** Values of the sensors loops record without regulating on them (recorded-values.ts). */
  readonly recordedValues: RecordedValues;
  private readonly subscribers = new Set<DaemonEvents>();
  private readonly timers: DaemonTimers;
  private readonly reloads: ReloadQueue;
  private readonly removal: LoopRemoval;
  private started = false;
  private stopped = false;
  /** The running config's text (written into a fresh database on recovery). */
  private configText: string;
  private stopClockSteps: (() => void) | undefined;
  /**
   * When this process started, as a wall-clock reading on the clock's current frame (moved by
   * every step it survives): a clock step moves only the stored schedule times recorded since
   * (clock-step.ts).
   */
  private readonly processStart = { ms: Number.NaN };
  /** Node conditions set from outside (ApiServing, NodeIdUnique), shown on every loop, new ones too. */
  private readonly nodeConditions = new Map<ExternalNodeCondition, NodeHealth>();

  constructor(private readonly opts: DaemonOptions) {
    const { config, clock, logger, store } = opts;
    this.config = config;
    this.configText = opts.configText;
    this.drivers = opts.drivers ?? buildDrivers(config, clock);
    this.recorder = new CycleRecorder(store);
    this.recordedValues = new RecordedValues(() => this.config, store, clock, logger);
    this.timers = this.createTimers();
    this.reloads = this.createReloadQueue();
    this.removal = new LoopRemoval({
      loops: this.loops,
      store,
      drivers: this.drivers,
      clock,
      logger,
      liveness: opts.liveness,
      recordSafeEvent: (event) => this.recordSafeEvent(event),
    });
    superviseStore({
      store,
      clock,
      logger,
      running: () => ({ config: this.config, configText: this.configText }),
      loops: this.loops,
    });
    this.sampler = new Sampler({
      clock,
      logger: logger.child({ component: 'sampler' }),
      sensors: this.sampledSensors(),
      onReading: (sensorId, reading) => {
        this.recordedValues.reading(sensorId, reading);
        this.trigger(loopsReadingSensor(this.config, sensorId), 'reading');
      },
    });
    this.listenToPushSensors();
  }

  /** The periodic work: flushes, retention, status lines (timers.ts). */
  private createTimers(): DaemonTimers {
    const { clock, logger, store, flushEveryMs, statusEveryMs } = this.opts;
    return new DaemonTimers({
      clock,
      logger,
      store,
      flushEveryMs: () => flushEveryMs ?? this.config.storage.memoryFlushS * 1000,
      statusEveryMs: statusEveryMs ?? 300_000,
      statusLines: () =>
        [...this.loops.values()].map((loop) => ({
          status: loop.cycle.status,
          unit: this.config.loops[loop.id]?.unit ?? '',
        })),
    });
  }

  /** Reloads one at a time, stored first and retried (reload.ts); applied by applyReloaded. */
  private createReloadQueue(): ReloadQueue {
    const { clock, logger } = this.opts;
    return new ReloadQueue({
      clock,
      logger,
      target: {
        isStopped: () => this.stopped,
        setConfigValidity: (valid, message, nowMs, reason) => {
          for (const loop of this.loops.values()) loop.cycle.setConfigValidity(valid, message, nowMs, reason);
        },
        storeConfig: (next, text) => this.storeConfig(next, text),
        apply: (next, text, stored, nowMs) => this.applyReloaded(next, text, stored, nowMs),
      },
    });
  }

  /** Adds an event sink; returns what removes it (a bridge that could not start). */
  subscribe(sink: DaemonEvents): () => void {
    this.subscribers.add(sink);
    return () => this.subscribers.delete(sink);
  }

  async start(): Promise<void> {
    // Read before listening: a step noticed by this read happened before anything was recorded.
    this.processStart.ms = this.opts.clock.nowMs();
    this.stopClockSteps = this.opts.clock.onStep?.((deltaMs) => this.onClockStep(deltaMs));
    for (const driver of [...this.drivers.sensors.values(), ...this.drivers.actuators.values()]) {
      await driver.start?.();
    }
    await this.applyStartConfig();
    for (const id of Object.keys(this.config.loops)) this.addLoop(id);
    this.sampler.start();
    for (const loop of this.loops.values()) loop.runner.start();
    this.started = true;
    this.timers.start();
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
    this.timers.stop();
    // A reload in progress finishes first (it checks `stopped` between its steps), so it cannot
    // start a loop or a driver after the actuators were driven safe.
    await this.reloads.stop();
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
   * through their finalizer. Reloads run one at a time; see reload.ts for the retries.
   */
  reload(loaded: ConfigResult): Promise<ReloadOutcome> {
    return this.reloads.reload(loaded);
  }

  /** A config the database took, applied: removed loops finalized, drivers replaced, loops updated. */
  private async applyReloaded(
    next: Config,
    text: string,
    stored: StoredConfig,
    nowMs: number,
  ): Promise<ReloadOutcome> {
    const before = this.config;
    const { added, changed, removed } = loopChanges(before, next);
    this.config = next;
    this.configText = text;
    await this.removal.finalizePending(before);
    // Whatever the store could say: a loop gone from the file stops, its actuators safe.
    await this.removal.stopRemoved(removed);
    await replaceChangedDrivers(before, next, {
      drivers: this.drivers,
      clock: this.opts.clock,
      logger: this.opts.logger,
      recordSafeEvent: (event) => this.recordSafeEvent(event),
    });
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

  /** Writes batched state; a storage failure is logged, never stops regulation. */
  /** Writes the batched state now; `durable`: fsynced before it returns (a latched fault). */
  flush(opts: { durable?: boolean } = {}): void {
    this.timers.flush(opts);
  }

  /**
   * A person's fault reset (MQTT fault/reset, the Home Assistant button), as desired state:
   * committed to the store with the next generation and its 'fault-reset' event before it is
   * answered, so a crash right after cannot bring the latch back; the loop applies it at its
   * next cycle (and again after a crash), to a fault latched at or before `requestedAtMs`
   * (clock time the reset was received). Refused, changing nothing, when no such fault is
   * latched or the database cannot take it: the sender is told why.
   */
  requestFaultReset(loopId: string, source: string, requestedAtMs: number): FaultResetOutcome {
    const request = { loopId, source, requestedAtMs };
    return requestFaultReset(this.loops.get(loopId), request, this.opts.store, this.opts.logger);
  }

  /** The one event of a drive to the safe state (runtime/drive-safe.ts). */
  private recordSafeEvent(event: SafeStateEvent): void {
    // A supervised store defers an event it cannot write now; driveSafe logs one that throws.
    this.opts.store.desired.recordEvent(event);
  }

  /**
   * A condition of the whole node from outside the daemon (the HTTP server's ApiServing),
   * shown on every loop's status from now on. Regulation never depends on it.
   */
  setNodeCondition(type: ExternalNodeCondition, health: NodeHealth): void {
    this.nodeConditions.set(type, health);
    const nowMs = this.opts.clock.nowMs();
    for (const loop of this.loops.values()) loop.cycle.setNodeCondition(type, health, nowMs);
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
  private storeConfig(config: Config, text: string): StoredConfig {
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
    await this.removal.finalizePending();
  }

  /** The wall clock stepped: every remembered time moves with it (clock-step.ts). */
  private onClockStep(deltaMs: number): void {
    shiftRunningTimes(deltaMs, {
      loops: this.loops,
      logger: this.opts.logger,
      schedules: {
        store: this.opts.store.desired,
        processStart: this.processStart,
        nowMs: () => this.opts.clock.nowMs(),
      },
    });
  }

  /** A push sensor's new value is sampled at once, a plug's availability change runs its loops at once. */
  private listenToPushSensors(): void {
    for (const [id, driver] of this.drivers.sensors) driver.onValue?.(() => this.sampler.readNow(id));
    for (const [id, driver] of this.drivers.actuators) {
      driver.onAvailability?.(() =>
        this.trigger(loopsDrivingActuator(this.config, id), 'actuator availability'),
      );
    }
  }

  /** Every sensor with a driver (one whose driver could not start has none: never read). */
  private sampledSensors() {
    return Object.entries(this.config.sensors).flatMap(([id, sensor]) => {
      const driver = this.drivers.sensors.get(id);
      return driver ? [{ driver, periodMs: sensor.periodS * 1000 }] : [];
    });
  }

  /** Builds loop `id` of the running config (loop-factory.ts); the caller starts it. */
  private addLoop(id: string): void {
    const { clock, logger, store, liveness } = this.opts;
    const loop = buildRunningLoop(id, {
      config: () => this.config,
      store,
      sampler: this.sampler,
      actuators: this.drivers.actuators,
      recorder: this.recorder,
      clock,
      logger,
      resyncMs: this.opts.resyncMs ?? 30_000,
      liveness,
      flush: (opts) => this.flush(opts),
      publishStatus: (status) => {
        for (const sink of this.subscribers) sink.status?.(status);
      },
      cycleDuration: (loop, durationMs) => {
        for (const sink of this.subscribers) sink.cycleDuration?.(loop, durationMs);
      },
    });
    const nowMs = clock.nowMs();
    for (const [type, health] of this.nodeConditions) loop.cycle.setNodeCondition(type, health, nowMs);
    this.loops.set(id, loop);
  }

  private trigger(loopIds: readonly string[], reason: string): void {
    for (const id of loopIds) this.loops.get(id)?.runner.trigger(reason);
  }
}
