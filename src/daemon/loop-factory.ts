import type { Logger } from 'pino';
import { nodeTimeZone } from '../config/schema/schedule.js';
import type { Config } from '../config/schema.js';
import { toLoopSpec } from '../config/to-loop-spec.js';
import { effectiveDesired } from '../core/schedule/effective-desired.js';
import type { LoopStatus } from '../core/status.js';
import { tuningRunStartedAtMs } from '../core/tuning/loop-tuning.js';
import type { ActuatorDriver } from '../drivers/types.js';
import { type CycleDesired, LoopReconciler } from '../runtime/loop-reconciler.js';
import { LoopRunner } from '../runtime/loop-runner.js';
import type { Sampler } from '../runtime/sampler.js';
import type { NewTuning } from '../store/desired-store.js';
import type { LoopLiveness } from '../systemd/watchdog.js';
import type { Clock } from '../time/clock.js';
import type { CycleRecorder } from './cycle-recorder.js';
import { type DaemonStore, storedLoopState } from './store.js';

/** One running loop: its reconciler (what a cycle does) and its runner (when cycles run). */
export interface RunningLoop {
  id: string;
  cycle: LoopReconciler;
  runner: LoopRunner;
}

/** What a loop is built from: the daemon's config, store, sampler and drivers. */
export interface LoopFactoryDeps {
  /** The running config (it changes on reload: read at every use). */
  config: () => Config;
  store: DaemonStore;
  sampler: Sampler;
  /** The running actuator drivers (replaced in place on reload). */
  actuators: Map<string, ActuatorDriver>;
  recorder: CycleRecorder;
  clock: Clock;
  logger: Logger;
  /** A cycle runs at least this often even when nothing happens, ms. */
  resyncMs: number;
  liveness?: LoopLiveness;
  /** Writes batched state now; `durable`: fsynced before it returns. */
  flush: (opts?: { durable?: boolean }) => void;
  /** Tells the daemon's subscribers a loop status. */
  publishStatus: (status: LoopStatus) => void;
  /** Tells the daemon's subscribers how long a cycle took (real time, ms), failed ones too. */
  cycleDuration?: (loop: string, durationMs: number) => void;
}

/**
 * Builds loop `id` of the running config, from its stored memory and status, and registers it
 * with the watchdog gate. Not started: the daemon starts its runner.
 */
export function buildRunningLoop(id: string, deps: LoopFactoryDeps): RunningLoop {
  const { clock, store, liveness, resyncMs } = deps;
  const loopLogger = deps.logger.child({ loop: id });
  const cycle = buildReconciler(id, deps, loopLogger);
  const runner = new LoopRunner({
    name: id,
    clock,
    cycle: () => timedCycle(id, () => cycle.run(), deps.cycleDuration),
    resyncMs,
    backoff: { initialMs: 1_000, maxMs: 60_000 },
    logger: loopLogger,
    onCycleSuccess: () => liveness?.cycleSucceeded(id),
  });
  // Three missed resyncs before the watchdog gives up on the loop: a failure streak backs off
  // to 60 s at most, so one streak of retries does not restart the daemon, a hung cycle does.
  liveness?.addLoop(id, 3 * resyncMs);
  const health = store.health?.();
  if (health) cycle.setStorageHealth(health, clock.nowMs());
  return { id, cycle, runner };
}

function buildReconciler(id: string, deps: LoopFactoryDeps, loopLogger: Logger): LoopReconciler {
  const { config, sampler, store } = deps;
  return new LoopReconciler({
    spec: toLoopSpec(config(), id),
    desired: desiredFromStore(store, id),
    // Presets, weekly schedule, profiles: the setpoint in force at the cycle's now.
    schedule: (desired, nowMs) =>
      effectiveDesired(desired, config().loops[id] ?? {}, nodeTimeZone(config()), nowMs),
    ...storedLoopState(store, id, loopLogger),
    onCycle: (completed) => {
      try {
        deps.recorder.record(completed);
      } catch (error) {
        // Buffering history must never fail a cycle that has acted.
        loopLogger.error({ err: error }, 'could not record the cycle');
      }
      // A fault latched in this cycle is rare, critical state: written at once, not batched
      // (a crash must not lose it). A reset needs no such write: it is desired state. So is
      // an autotune request acted on, a run ended or its result stored: a restart from an
      // older memory would start a run again, or store its result twice.
      // Durable: a power cut right after must not lose a latch either.
      if (completed.memory.latchedFault?.atMs === completed.nowMs || completed.writeNow) {
        deps.flush({ durable: true });
      }
    },
    autotuneDefaults: () => config().loops[id]?.autotune,
    recordTuning: (tuning, apply) => recordAutotuneResult(store, id, tuning, apply),
    // As the loop's own sensor: a reading aged by failed reads carries the failure, so the
    // Interlocked message says what failed rather than only how old the reading is.
    interlockReadings: () =>
      Object.fromEntries(
        (config().loops[id]?.interlocks ?? []).map((interlock) => [
          interlock.sensor,
          sampler.latestForLoop(interlock.sensor),
        ]),
      ),
    disturbanceReading: () => {
      const controller = config().loops[id]?.controller;
      const sensor = controller?.type === 'pid' ? controller.feedforward?.sensor : undefined;
      return sensor === undefined ? undefined : sampler.latest(sensor);
    },
    latestReading: () => {
      const sensor = config().loops[id]?.sensor;
      return sensor === undefined ? undefined : sampler.latestForLoop(sensor);
    },
    // Several sensors: each one's latest, as the sampler keeps it (a sensor in several loops is
    // read once, on its own period); combined by the reconciler at the cycle's now.
    sensorReadings: () =>
      Object.fromEntries(
        (config().loops[id]?.sensors ?? []).map((sensor) => [sensor, sampler.latestForLoop(sensor)]),
      ),
    actuators: deps.actuators,
    clock: deps.clock,
    logger: loopLogger,
    onStatus: deps.publishStatus,
  });
}

/**
 * Level-based: desired state is read from the store every cycle, so a change committed by
 * any writer (MQTT, a reload) is picked up by the next cycle.
 */
function desiredFromStore(store: DaemonStore, id: string): () => CycleDesired {
  return () => {
    const row = store.desired.desired(id);
    if (!row) throw new Error(`loop ${id}: no desired state in the store`);
    const { generation, setpoint, mode, faultReset, tuning, lastTuningVersion, autotuneRequest } = row;
    const { preset, changedAtMs, profileRun } = row;
    return {
      generation,
      setpoint,
      mode,
      ...(faultReset === undefined ? {} : { faultReset }),
      ...(tuning === undefined ? {} : { tuning }),
      ...(lastTuningVersion === undefined ? {} : { lastTuningVersion }),
      ...(autotuneRequest === undefined ? {} : { autotuneRequest }),
      ...(preset === undefined ? {} : { preset }),
      ...(changedAtMs === undefined ? {} : { changedAtMs }),
      ...(profileRun === undefined ? {} : { profileRun }),
    };
  };
}

/**
 * Stores an autotune's result as the loop's next tuning, unless the newest stored tuning is
 * that run's already (stored just before a crash that lost the memory saying so): each run
 * gives one version. Reads the tunings from the file: rare (once per finished run), and a
 * failure is the loop's to retry.
 */
function recordAutotuneResult(
  store: DaemonStore,
  loop: string,
  tuning: NewTuning,
  apply: boolean,
): { version: number } {
  const run = tuningRunStartedAtMs(tuning);
  const newest = store.desired.tunings(loop)[0];
  if (run !== undefined && newest !== undefined && tuningRunStartedAtMs(newest) === run) {
    return { version: newest.version };
  }
  return store.desired.recordTuning(loop, tuning, { apply, source: 'autotune' });
}

/**
 * Runs one cycle and reports its duration in real time (performance.now: under --speed the
 * clock would multiply it, a manual clock would make it 0). A report that throws is ignored:
 * it must not replace the cycle's own result or error.
 */
async function timedCycle<T>(
  id: string,
  run: () => Promise<T>,
  report: ((loop: string, durationMs: number) => void) | undefined,
): Promise<T> {
  const startedMs = performance.now();
  try {
    return await run();
  } finally {
    try {
      report?.(id, performance.now() - startedMs);
    } catch {
      // Metrics are never worth a cycle.
    }
  }
}
