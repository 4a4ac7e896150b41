import type { Logger } from 'pino';
import type { ActuatorCommand } from '../core/command.js';
import type { LoopSpec } from '../core/loop-spec.js';
import { loopActuators } from '../core/loop-spec.js';
import { resetLatchedFault, resumeLoopMemory } from '../core/loop-state.js';
import { initialLoopMemory, type LoopDesired, type LoopMemory, reconcile } from '../core/reconcile.js';
import { type LoopStatus, markCycleFailed } from '../core/status.js';
import type { ActuatorLevel, Condition, Reading } from '../core/types.js';
import type { ActuatorDriver } from '../drivers/types.js';
import type { Clock } from './clock.js';
import type { CycleResult } from './loop-runner.js';

export interface LoopCycleOptions {
  spec: LoopSpec;
  /** Desired state, read fresh every cycle (config now; the store and MQTT later). */
  desired: () => LoopDesired;
  /** Latest good reading of the loop's sensor (from the sampler). */
  latestReading: () => Reading | undefined;
  /** Latest readings of the loop's interlock sensors, by sensor id. */
  interlockReadings?: () => Record<string, Reading | undefined>;
  actuators: Map<string, ActuatorDriver>;
  clock: Clock;
  logger: Logger;
  /** Called with the status after every cycle, successful or not. */
  onStatus?: (status: LoopStatus) => void;
  /** Called after every successful cycle with what it decided (persistence, history). */
  onCycle?: (cycle: CompletedCycle) => void;
  /** Stored memory to resume from; reconciled with the actuators' real state on the first cycle. */
  memory?: LoopMemory;
  /** Stored status: shown until the first cycle, and its observedGeneration carried over. */
  status?: LoopStatus;
}

/** What one successful cycle saw and did. */
export interface CompletedCycle {
  loop: string;
  nowMs: number;
  reading: Reading | undefined;
  memory: LoopMemory;
  status: LoopStatus;
  commands: ActuatorCommand[];
}

/**
 * One loop's cycle: observe everything fresh → reconcile (pure) → act on the differences.
 * The runner decides when it runs; this decides nothing about time except reading the clock.
 */
export class LoopCycle {
  private memory: LoopMemory;
  private spec: LoopSpec;
  private configValidity: Condition | undefined;
  private resumed = false;
  private lastStatus: LoopStatus | undefined;
  private observedGeneration = 0;

  constructor(private readonly opts: LoopCycleOptions) {
    this.memory = opts.memory ?? initialLoopMemory();
    this.spec = opts.spec;
    this.lastStatus = opts.status;
    this.observedGeneration = opts.status?.observedGeneration ?? 0;
  }

  get status(): LoopStatus | undefined {
    return this.lastStatus;
  }

  get loopMemory(): LoopMemory {
    return this.memory;
  }

  async run(): Promise<CycleResult> {
    const { clock } = this.opts;
    const spec = this.spec;
    const nowMs = clock.nowMs();
    const desired = this.opts.desired();
    try {
      const actuators = await this.observeActuators();
      if (!this.resumed) {
        // Observe first, then act: adopt what the actuators really do before the first command.
        const relayIds = loopActuators(spec)
          .filter(({ actuator }) => actuator.kind === 'relay')
          .map(({ actuator }) => actuator.id);
        this.memory = resumeLoopMemory(this.opts.memory, relayIds, actuators, nowMs);
        this.resumed = true;
      }
      const reading = this.opts.latestReading();
      const interlocks = this.opts.interlockReadings?.();
      const result = reconcile(
        spec,
        desired,
        { reading, actuators, ...(interlocks ? { interlocks } : {}) },
        this.memory,
        nowMs,
      );
      await this.act(result.commands);
      this.memory = result.memory;
      this.observedGeneration = desired.generation;
      this.publish(result.status);
      this.opts.onCycle?.({
        loop: spec.id,
        nowMs,
        reading,
        memory: result.memory,
        status: result.status,
        commands: result.commands,
      });
      return { nextWakeMs: result.nextWakeMs };
    } catch (error) {
      if (this.lastStatus) {
        const message = error instanceof Error ? error.message : String(error);
        this.publish(markCycleFailed(this.lastStatus, this.observedGeneration, message, nowMs));
      }
      throw error;
    }
  }

  /** Drives every actuator of the loop to its safe level; keeps going when one fails. */
  async driveSafe(reason: string): Promise<void> {
    for (const { actuator } of loopActuators(this.spec)) {
      const driver = this.opts.actuators.get(actuator.id);
      try {
        await driver?.write(actuator.safeLevel);
        this.opts.logger.info(
          { actuator: actuator.id, to: actuator.safeLevel },
          `${actuator.id} → safe state (${reason})`,
        );
      } catch (error) {
        this.opts.logger.error(
          { err: error, actuator: actuator.id },
          `${actuator.id}: could not reach safe state`,
        );
      }
    }
  }

  private async observeActuators(): Promise<Record<string, ActuatorLevel>> {
    const levels: Record<string, ActuatorLevel> = {};
    for (const { actuator } of loopActuators(this.spec)) {
      try {
        levels[actuator.id] = await this.opts.actuators.get(actuator.id)?.observe();
      } catch (error) {
        // Unknown is safe here: an unknown state is never confirmed, so it gets commanded.
        this.opts.logger.debug({ err: error, actuator: actuator.id }, 'observe failed');
        levels[actuator.id] = undefined;
      }
    }
    return levels;
  }

  /** Writes every command, even after one fails, then reports the failures (requeue). */
  private async act(commands: ActuatorCommand[]): Promise<void> {
    const failures: string[] = [];
    for (const command of commands) {
      const driver = this.opts.actuators.get(command.actuatorId);
      try {
        if (!driver) throw new Error(`no driver for actuator "${command.actuatorId}"`);
        await driver.write(command.level);
        // Not `level`: pino reads that key as the log level.
        const fields = {
          actuator: command.actuatorId,
          to: command.level,
          reason: command.reason,
          detail: command.detail,
        };
        const message = `${command.actuatorId} → ${describeLevel(driver.kind, command.level)} (${command.reason}: ${command.detail})`;
        if (command.reason === 'keep-alive') this.opts.logger.debug(fields, message);
        else if (command.reason === 'drift' || command.reason === 'retry')
          this.opts.logger.warn(fields, message);
        else this.opts.logger.info(fields, message);
      } catch (error) {
        failures.push(`${command.actuatorId}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (failures.length > 0) throw new Error(`actuator write failed: ${failures.join('; ')}`);
  }

  /** Clears a fault latched at or before `requestedAtMs` (a person's reset); true when it did. */
  resetFault(requestedAtMs: number): boolean {
    const before = this.memory;
    this.memory = resetLatchedFault(before, requestedAtMs);
    return this.memory !== before;
  }

  /**
   * A reloaded config changed this loop's settings: the next cycle uses them, from the same
   * memory (the PID re-bases on new gains, so the output continues where it was).
   */
  updateSpec(spec: LoopSpec): void {
    this.spec = spec;
  }

  /** The `ConfigValid` condition: False while the file on disk is invalid (the last good one runs). */
  setConfigValidity(valid: boolean, message: string, nowMs: number): void {
    const status = valid ? 'True' : 'False';
    const unchanged = this.configValidity?.status === status && this.configValidity.message === message;
    if (unchanged) return;
    this.configValidity = {
      type: 'ConfigValid',
      status,
      reason: valid ? 'Applied' : 'Invalid',
      message,
      lastTransitionMs:
        this.configValidity && this.configValidity.status === status
          ? this.configValidity.lastTransitionMs
          : nowMs,
      observedGeneration: this.lastStatus?.generation ?? 0,
    };
    if (this.lastStatus) this.publish(this.lastStatus);
  }

  private publish(status: LoopStatus): void {
    if (this.configValidity) {
      const conditions = status.conditions.filter((c) => c.type !== 'ConfigValid');
      status = {
        ...status,
        conditions: [...conditions, { ...this.configValidity, observedGeneration: status.generation }],
      };
    }
    this.lastStatus = status;
    this.opts.onStatus?.(status);
  }
}

function describeLevel(kind: 'relay' | 'continuous', level: number): string {
  if (kind === 'relay') return level > 0 ? 'ON' : 'OFF';
  return `${Math.round(level * 1000) / 10} %`;
}
