/**
 * homeostat's full reconcile path in the benchmark: `reconcile()` with a LoopSpec built from a
 * config the way the daemon builds it (validateConfig, then toLoopSpec), on every reading and at
 * every wake-up it asks for (relay switches, retries, keep-alives). Its commands are what the
 * simulated actuator holds, and the actuator reports exactly that level back as observed (a
 * continuous actuator that reports the level it was given; a relay its state).
 *
 * Beside the bare `homeostat PI` (pidStep alone, homeostat.ts) it shows what the rest of the
 * cycle costs: gate, levels, monitors and above all the act step (command.ts), which sends a
 * level only when it differs from the last one commanded (with a 0.005 tolerance on
 * the observed level, small moves of a continuous output were not sent, and after a 0.5 °C
 * setpoint step the loop did 10–37 % worse than its bare PID).
 *
 * Also here: two plants the issue measured that plants.ts does not have (a second-order plant
 * and the room 20 % off its tuning), for the act-step comparison only.
 */
import { validateConfig } from '../../../src/config/load.js';
import { toLoopSpec } from '../../../src/config/to-loop-spec.js';
import type { CommandTiming } from '../../../src/core/command.js';
import type { LoopSpec } from '../../../src/core/loop-spec.js';
import { initialLoopMemory, type LoopMemory, reconcile } from '../../../src/core/reconcile.js';
import type { Reading } from '../../../src/core/types.js';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';
import { TIME_PROPORTIONING } from './homeostat.js';
import { CONTINUOUS_PLANTS } from './plants.js';
import { IRREGULAR_MAX_S, REGULAR_PERIOD_S } from './scenarios.js';
import type { BenchPlant } from './simulate.js';

const LOOP = 'bench';
const HEATER = 'heater';

/** Relay keys of the config (relayFields); an empty object leaves every one at its default. */
export type RelayKeys = Partial<{
  windowS: number;
  minOnS: number;
  minOffS: number;
  modulation: 'window' | 'band';
  band: number;
}>;

/** Writes (commands sent) of a run, counted by the controller for the act-step table. */
export interface WriteCount {
  writes: number;
}

/**
 * The config a user would write for this plant: a simulated sensor (its period the regular
 * one, stale only after 3 × the longest irregular interval, so no scenario goes stale), a
 * simulated heater (relay with `relay`'s keys, or continuous) and a heat loop with the tuning.
 */
export function benchLoopSpec(context: ControllerContext, relay: RelayKeys): LoopSpec {
  const { plant, tuning, setpoint } = context;
  const heater =
    plant.actuator === 'relay'
      ? { kind: 'simulated_relay', plant: 'plant', gain: plant.gain, ...relay }
      : { kind: 'simulated_continuous', plant: 'plant', gain: plant.gain };
  const checked = validateConfig({
    version: 1,
    node: { id: 'bench' },
    simulation: {
      plants: {
        plant: {
          kind: 'thermal',
          ambient: plant.ambientC,
          timeConstantS: plant.timeConstantS,
          deadTimeS: plant.deadTimeS,
        },
      },
    },
    sensors: {
      temp: {
        kind: 'simulated',
        plant: 'plant',
        periodS: REGULAR_PERIOD_S,
        staleAfterS: 3 * IRREGULAR_MAX_S,
      },
    },
    actuators: { [HEATER]: heater },
    loops: {
      [LOOP]: {
        sensor: 'temp',
        raise: HEATER,
        setpoint,
        limits: { min: plant.ambientC, max: setpoint + 10 },
        controller: { type: 'pid', kp: tuning.kp, tiS: tuning.tiS, tdS: tuning.tdS },
      },
    },
  });
  if (!checked.ok) throw new Error(`bench: invalid loop config: ${checked.errors.join('; ')}`);
  return toLoopSpec(checked.config, LOOP);
}

class ReconcileController implements BenchController {
  private memory: LoopMemory = initialLoopMemory();
  private reading: Reading | undefined;
  private setpoint: number;
  /** What the actuator holds: the last level commanded (0 before any). */
  private held = 0;
  private wakeMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly spec: LoopSpec,
    context: ControllerContext,
    private readonly count: WriteCount | undefined,
  ) {
    this.setpoint = context.setpoint;
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    this.reading = { value: measured, atMs };
    this.setpoint = setpoint;
    this.cycle(atMs);
  }

  levelAt(atMs: number): number {
    if (atMs >= this.wakeMs) this.cycle(atMs);
    return this.held;
  }

  private cycle(nowMs: number): void {
    const result = reconcile(
      this.spec,
      { generation: 1, setpoint: this.setpoint, mode: 'heat' },
      { ...(this.reading ? { reading: this.reading } : {}), actuators: { [HEATER]: this.held } },
      this.memory,
      nowMs,
    );
    for (const command of result.commands) {
      this.held = command.level;
      if (this.count) this.count.writes++;
    }
    this.memory = result.memory;
    this.wakeMs = result.nextWakeMs;
  }
}

/**
 * homeostat's reconcile path. On a relay plant `relay` gives the relay's keys; by default those
 * of the bare rows (homeostat.ts TIME_PROPORTIONING, modulation window), so the two compare.
 */
export function homeostatReconcile(
  id: string,
  note: string,
  options: {
    relay?: RelayKeys;
    actuators?: ControllerSpec['actuators'];
    count?: WriteCount;
    /** The act step's send resolution (command.ts CommandTiming); default its own. */
    sendResolution?: number;
  } = {},
): ControllerSpec {
  const relay = options.relay ?? {
    modulation: 'window',
    windowS: TIME_PROPORTIONING.windowMs / 1000,
    minOnS: TIME_PROPORTIONING.minOnMs / 1000,
    minOffS: TIME_PROPORTIONING.minOffMs / 1000,
  };
  return {
    id,
    actuators: options.actuators ?? ['continuous', 'relay'],
    note,
    create: (context) => {
      const spec: LoopSpec & CommandTiming = {
        ...benchLoopSpec(context, relay),
        ...(options.sendResolution === undefined ? {} : { sendResolution: options.sendResolution }),
      };
      return new ReconcileController(spec, context, options.count);
    },
  };
}

export const HOMEOSTAT_RECONCILE = homeostatReconcile(
  'homeostat reconcile',
  'homeostat PI through the whole reconcile() (config → toLoopSpec, act step, status), the actuator ' +
    'reporting what it holds; relays as homeostat PI (window, min on/off)',
);

/** A relay under a PID with nothing but the tuning configured: every relay key at its default. */
export const HOMEOSTAT_DEFAULTS = homeostatReconcile(
  'homeostat defaults',
  'relay plants: homeostat PI through reconcile(), the relay with every key at its config default',
  { relay: {}, actuators: ['relay'] },
);

/**
 * Plants the issue measured the act step on that plants.ts lacks: the autotune targets'
 * second-order plant (K 20, τ 600 s, θ 30 s, a second lag of 150 s; tuned by SIMC on its
 * half-rule FOPDT, τ 675 s, θ 105 s), and the room with a gain 20 % above the one it is tuned
 * for (K 24 tuned as K 20).
 */
const ROOM = CONTINUOUS_PLANTS[0]!;
export const ACT_STEP_PLANTS: readonly BenchPlant[] = [
  {
    ...ROOM,
    id: 'second-order',
    label: 'second-order (K 20, τ 600 s, θ 30 s, second lag 150 s; tuned for τ 675 s, θ 105 s)',
    deadTimeS: 30,
    secondLagS: 150,
    tunedFor: { gain: 20, timeConstantS: 675, deadTimeS: 105 },
  },
  {
    ...ROOM,
    id: 'room-off-20%',
    label: 'room with K 24, tuned for K 20 (20 % off)',
    gain: 24,
    tunedFor: ROOM,
  },
];
