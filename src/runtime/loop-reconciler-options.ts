/** What a LoopReconciler (loop-reconciler.ts) is built with and what it reports. */
import type { Logger } from 'pino';
import type { ActuatorCommand } from '../core/command.js';
import type { LoopSpec } from '../core/loop-spec.js';
import type { LoopMemory } from '../core/loop-state.js';
import type { CycleDesired } from '../core/prepare-cycle.js';
import type { EffectiveDesired, ScheduleStatus } from '../core/schedule/effective-desired.js';
import type { LoopStatus } from '../core/status.js';
import type { AutotuneDefaults, AutotuneEvent, TuningStatus } from '../core/tuning/loop-tuning.js';
import type { NewTuning } from '../core/tuning/stored-tuning.js';
import type { Reading } from '../core/types.js';
import type { ActuatorDriver } from '../drivers/types.js';
import type { Clock } from '../time/clock.js';

/** A loop's status as the runtime publishes it: reconcile's, with the tunings and schedule parts. */
export type PublishedLoopStatus = LoopStatus & { tuning?: TuningStatus; schedule?: ScheduleStatus };

export interface LoopReconcilerOptions {
  spec: LoopSpec;
  /** Desired state, read fresh every cycle (the store's in-memory copy: never SQLite on the control path). */
  desired: () => CycleDesired;
  /** Latest good reading of the loop's sensor (from the sampler). */
  latestReading: () => Reading | undefined;
  /**
   * A loop with several sensors (spec.sensorSet): the latest reading of each, by sensor id,
   * combined every cycle (core/sensor-set.ts) in place of latestReading.
   */
  sensorReadings?: () => Record<string, Reading | undefined>;
  /** Latest readings of the loop's interlock sensors, by sensor id. */
  interlockReadings?: () => Record<string, Reading | undefined>;
  /**
   * Latest reading of the loop's disturbance sensor (its PID's feedforward), if it names one.
   * Judged by the core (feedforward.ts): missing, stale or implausible falls back to the model.
   */
  disturbanceReading?: () => Reading | undefined;
  actuators: Map<string, ActuatorDriver>;
  clock: Clock;
  logger: Logger;
  /** Called with the status after every cycle, successful or not. */
  onStatus?: (status: LoopStatus) => void;
  /** Called after every cycle that reconciled (also when a write failed) with what it decided. */
  onCycle?: (cycle: CompletedCycle) => void;
  /** Stored memory to resume from; reconciled with the actuators' real state on the first cycle. */
  memory?: LoopMemory;
  /** Stored status: shown until the first cycle, and its observedGeneration carried over. */
  status?: LoopStatus;
  /** The loop's config `autotune` section, read at every request (absent: the defaults). */
  autotuneDefaults?: () => AutotuneDefaults | undefined;
  /**
   * Stores a finished autotune's result as the loop's next tuning (DesiredStore.recordTuning),
   * applied when `apply`; returns its version. Throws when it cannot: retried next cycle.
   * Absent: results stay in memory and status only.
   */
  recordTuning?: (tuning: NewTuning, apply: boolean) => { version: number };
  /**
   * The effective setpoint and mode at the cycle's `now` from the stored desired state (presets,
   * weekly schedule, profiles: effective-desired.ts), with the `schedule` status part. Absent,
   * or a result without `schedule` (a loop without any): the stored setpoint and mode as they are.
   */
  schedule?: (desired: CycleDesired, nowMs: number) => EffectiveDesired;
}

/** What one successful cycle saw and did. */
export interface CompletedCycle {
  loop: string;
  nowMs: number;
  reading: Reading | undefined;
  memory: LoopMemory;
  status: LoopStatus;
  commands: ActuatorCommand[];
  /** What the autotune did this cycle (started, refused, done, aborted), for the event log. */
  events: AutotuneEvent[];
  /**
   * Rare state this cycle changed that a crash must not lose (an autotune request acted on, a
   * run ended, a result stored): the memory should be written now, not with the next batch.
   */
  writeNow: boolean;
}
