import type { Logger } from 'pino';
import type { Config } from './config/schema.js';
import { toLoopSpec } from './config/to-loop-spec.js';
import type { LoopDesired } from './core/reconcile.js';
import type { LoopStatus } from './core/status.js';
import {
  applyConfig,
  CycleRecorder,
  type DaemonStore,
  finalizeRemovedLoops,
  previousConfig,
  storedLoopState,
} from './daemon-store.js';
import { buildDrivers, type Drivers } from './drivers/build.js';
import type { Clock, TimerHandle } from './runtime/clock.js';
import { LoopCycle } from './runtime/loop-cycle.js';
import { LoopRunner } from './runtime/loop-runner.js';
import { Sampler } from './runtime/sampler.js';
import { formatStatusLine } from './status-line.js';

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
  /** Called with every loop status (MQTT subscribes here in a later issue). */
  onStatus?: (status: LoopStatus) => void;
  /**
   * Where desired state, memory and history live. Without it (tests) desired state comes from
   * the config alone (generation 1) and nothing survives a restart.
   */
  store?: DaemonStore;
  /** The config file's text: its hash decides the generation. Required with `store`. */
  configText?: string;
  /** Batched state is written this often, ms. Default storage.memoryFlushS of the config. */
  flushEveryMs?: number;
}

interface RunningLoop {
  id: string;
  sensorId: string;
  cycle: LoopCycle;
  runner: LoopRunner;
}

/**
 * Composition root: builds drivers, the sampler and one runner per loop; starts them in
 * order and stops them in reverse, ending with every actuator at its safe state.
 */
export class Daemon {
  readonly drivers: Drivers;
  private readonly sampler: Sampler;
  private loops: RunningLoop[] = [];
  private flushTimer: TimerHandle | undefined;
  private statusTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly opts: DaemonOptions) {
    const { config, clock, logger } = opts;
    this.drivers = opts.drivers ?? buildDrivers(config, () => clock.nowMs());
    this.sampler = new Sampler({
      clock,
      logger: logger.child({ component: 'sampler' }),
      sensors: Object.entries(config.sensors).map(([id, sensor]) => ({
        driver: this.drivers.sensors.get(id)!,
        periodMs: sensor.periodS * 1000,
      })),
      onReading: (sensorId) => this.triggerLoopsOf(sensorId, 'reading'),
    });
  }

  async start(): Promise<void> {
    for (const driver of [...this.drivers.sensors.values(), ...this.drivers.actuators.values()]) {
      await driver.start?.();
    }
    await this.applyDesiredState();
    this.loops = this.buildLoops();
    this.sampler.start();
    for (const loop of this.loops) loop.runner.start();
    this.scheduleStatusLines();
    this.scheduleFlushes();
    this.opts.logger.info(
      { loops: this.loops.map((l) => l.id), node: this.opts.config.node.id },
      `homeostat regulating ${this.loops.length} loop(s)`,
    );
  }

  /** Stops in reverse order and leaves every actuator at its safe state. Safe to call twice. */
  async stop(reason = 'shutdown'): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.statusTimer) this.opts.clock.clearTimer(this.statusTimer);
    if (this.flushTimer) this.opts.clock.clearTimer(this.flushTimer);
    await Promise.allSettled(this.loops.map((loop) => loop.runner.stop()));
    await this.sampler.stop().catch((error) => this.opts.logger.error({ err: error }, 'sampler stop failed'));
    for (const loop of this.loops) await loop.cycle.driveSafe(reason);
    this.flush();
    for (const driver of [...this.drivers.actuators.values(), ...this.drivers.sensors.values()].reverse()) {
      await driver
        .stop?.()
        .catch((error) => this.opts.logger.error({ err: error, driver: driver.id }, 'stop failed'));
    }
    this.opts.logger.info('homeostat stopped; actuators at their safe state');
  }

  /** With a store: applies the config as the desired state and finalizes removed loops. */
  private async applyDesiredState(): Promise<void> {
    const { store, config, logger, clock } = this.opts;
    if (!store) return;
    if (this.opts.configText === undefined) throw new Error('Daemon: configText is required with a store');
    const oldConfig = previousConfig(store);
    const applied = applyConfig(store, config, this.opts.configText);
    logger.info(
      { generation: applied.generation, changed: applied.changed },
      applied.changed
        ? `config applied as generation ${applied.generation}`
        : `config unchanged: generation ${applied.generation}`,
    );
    await finalizeRemovedLoops(
      store,
      store.desired.pendingRemovals(),
      oldConfig,
      this.drivers,
      () => clock.nowMs(),
      logger,
    );
  }

  private buildLoops(): RunningLoop[] {
    const { config, clock, logger, store } = this.opts;
    const recorder = store ? new CycleRecorder(store) : undefined;
    return Object.entries(config.loops).map(([id, loop]) => {
      const loopLogger = logger.child({ loop: id });
      const fromFile: LoopDesired = { generation: 1, setpoint: loop.setpoint, mode: loop.mode };
      // Level-based: desired state is read from the store every cycle, so a change committed
      // by any writer (MQTT, CLI) is picked up by the next cycle without an event.
      const desired = (): LoopDesired => {
        const row = store?.desired.desired(id);
        return row ? { generation: row.generation, setpoint: row.setpoint, mode: row.mode } : fromFile;
      };
      const cycle = new LoopCycle({
        spec: toLoopSpec(config, id),
        desired,
        ...(store ? storedLoopState(store, id, loopLogger) : {}),
        onCycle: (cycle) => recorder?.record(cycle),
        latestReading: () => this.sampler.latest(loop.sensor),
        actuators: this.drivers.actuators,
        clock,
        logger: loopLogger,
        onStatus: (status) => this.opts.onStatus?.(status),
      });
      const runner = new LoopRunner({
        name: id,
        clock,
        cycle: () => cycle.run(),
        resyncMs: this.opts.resyncMs ?? 30_000,
        backoff: { initialMs: 1_000, maxMs: 60_000 },
        logger: loopLogger,
      });
      return { id, sensorId: loop.sensor, cycle, runner };
    });
  }

  /** Writes batched state; a storage failure is logged, never stops regulation. */
  flush(): void {
    const store = this.opts.store;
    if (!store) return;
    try {
      store.state.flush();
    } catch (error) {
      this.opts.logger.error({ err: error }, 'could not write loop state to the database; will retry');
    }
  }

  private scheduleFlushes(): void {
    if (!this.opts.store) return;
    const everyMs = this.opts.flushEveryMs ?? this.opts.config.storage.memoryFlushS * 1000;
    const tick = () => {
      this.flush();
      this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
  }

  statuses(): LoopStatus[] {
    return this.loops.flatMap((loop) => (loop.cycle.status ? [loop.cycle.status] : []));
  }

  private triggerLoopsOf(sensorId: string, reason: string): void {
    for (const loop of this.loops) if (loop.sensorId === sensorId) loop.runner.trigger(reason);
  }

  private scheduleStatusLines(): void {
    const everyMs = this.opts.statusEveryMs ?? 300_000;
    if (everyMs <= 0) return;
    const tick = () => {
      for (const loop of this.loops) {
        const status = loop.cycle.status;
        if (!status) continue;
        const unit = this.opts.config.loops[loop.id]?.unit ?? '';
        this.opts.logger.info({ status: status }, formatStatusLine(status, unit));
      }
      this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
  }
}
