import type { Logger } from 'pino';
import type { Config } from './config/schema.js';
import { toLoopSpec } from './config/to-loop-spec.js';
import type { LoopDesired } from './core/reconcile.js';
import type { LoopStatus } from './core/status.js';
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
  /** Called with every loop status (MQTT and the store subscribe here in later issues). */
  onStatus?: (status: LoopStatus) => void;
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
  private readonly loops: RunningLoop[];
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
    this.loops = Object.entries(config.loops).map(([id, loop]) => {
      const loopLogger = logger.child({ loop: id });
      const desired: LoopDesired = { generation: 1, setpoint: loop.setpoint, mode: loop.mode };
      const cycle = new LoopCycle({
        spec: toLoopSpec(config, id),
        desired: () => desired,
        latestReading: () => this.sampler.latest(loop.sensor),
        actuators: this.drivers.actuators,
        clock,
        logger: loopLogger,
        onStatus: (status) => opts.onStatus?.(status),
      });
      const runner = new LoopRunner({
        name: id,
        clock,
        cycle: () => cycle.run(),
        resyncMs: opts.resyncMs ?? 30_000,
        backoff: { initialMs: 1_000, maxMs: 60_000 },
        logger: loopLogger,
      });
      return { id, sensorId: loop.sensor, cycle, runner };
    });
  }

  async start(): Promise<void> {
    for (const driver of [...this.drivers.sensors.values(), ...this.drivers.actuators.values()]) {
      await driver.start?.();
    }
    this.sampler.start();
    for (const loop of this.loops) loop.runner.start();
    this.scheduleStatusLines();
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
    await Promise.allSettled(this.loops.map((loop) => loop.runner.stop()));
    await this.sampler.stop().catch((error) => this.opts.logger.error({ err: error }, 'sampler stop failed'));
    for (const loop of this.loops) await loop.cycle.driveSafe(reason);
    for (const driver of [...this.drivers.actuators.values(), ...this.drivers.sensors.values()].reverse()) {
      await driver
        .stop?.()
        .catch((error) => this.opts.logger.error({ err: error, driver: driver.id }, 'stop failed'));
    }
    this.opts.logger.info('homeostat stopped; actuators at their safe state');
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
