/**
 * Control benchmark (`npm run bench:control`, `-- --json` for JSON only): homeostat's
 * controller beside the PID packages Node users install, Home Assistant's hysteresis rule and
 * the time-optimal bound, on simulated FOPDT plants through four scenarios. Prints figures;
 * it is not a test and always exits 0 (unless it crashes).
 */
import {
  DEFAULT_BAND,
  DEFAULT_MAX_HALF_BAND,
  DEFAULT_MODULATION,
  DEFAULT_WINDOW_S,
} from '../../src/kinds/fields.js';
import { DEFAULT_OUT_DIR, runAutotuneBench } from './control/autotune.js';
import { boundSwitch, TIME_OPTIMAL_BOUND } from './control/bound.js';
import type { BenchController, ControllerSpec } from './control/controller.js';
import { feedforwardSection } from './control/feedforward.js';
import { BAND_C, HOMEOSTAT, homeostatRelayWindow, TIME_PROPORTIONING } from './control/homeostat.js';
import { PEERS, peerVersions } from './control/peers.js';
import { holdingOutput, PLANTS, RELAY_PLANTS, simcTuning } from './control/plants.js';
import {
  ACT_STEP_PLANTS,
  HOMEOSTAT_DEFAULTS,
  HOMEOSTAT_RECONCILE,
  homeostatReconcile,
  type WriteCount,
} from './control/reconcile-path.js';
import {
  type ActStepRow,
  formatActStep,
  formatTable,
  formatTargets,
  formatWindowSweep,
  type RunResult,
  type WindowSweepRow,
  withRatios,
} from './control/report.js';
import {
  BENCH_SCENARIOS,
  IRREGULAR_MAX_S,
  IRREGULAR_MIN_S,
  REGULAR_PERIOD_S,
  SCENARIOS,
  type ScenarioSpec,
} from './control/scenarios.js';
import { type BenchPlant, STEP_S, simulate } from './control/simulate.js';
import { checkTargets } from './control/targets.js';

const CONTROLLERS: readonly ControllerSpec[] = [
  TIME_OPTIMAL_BOUND,
  ...HOMEOSTAT,
  HOMEOSTAT_RECONCILE,
  HOMEOSTAT_DEFAULTS,
  ...PEERS,
];

/**
 * The bound of scenario E: bound.ts's policy for the first step (as in A), then at the small
 * step full output until θ before the value reaches the new setpoint, from the old holding level.
 */
function smallStepBound(scenario: ScenarioSpec): ControllerSpec {
  return {
    ...TIME_OPTIMAL_BOUND,
    create: (context) => {
      const first = TIME_OPTIMAL_BOUND.create(context);
      const eventMs = context.startMs + context.plant.horizonS * 1000;
      const oldHold = holdingOutput(context.plant, context.setpoint);
      const step = boundSwitch(
        context.plant,
        context.setpoint + scenario.setpointStepC,
        eventMs,
        context.setpoint,
        oldHold,
        0,
      );
      const segments = [
        { fromMs: eventMs, level: 1 },
        { fromMs: step.switchMs, level: step.holdLevel },
      ];
      const controller: BenchController = {
        onReading: () => {},
        levelAt: (atMs) => {
          if (atMs < eventMs) return first.levelAt(atMs);
          let level = 0;
          for (const segment of segments) if (segment.fromMs <= atMs) level = segment.level;
          return level;
        },
        changeBetween: (afterMs, beforeMs) =>
          beforeMs <= eventMs
            ? first.changeBetween?.(afterMs, beforeMs)
            : segments.find((s) => s.fromMs > afterMs && s.fromMs < beforeMs)?.fromMs,
      };
      return controller;
    },
  };
}

function boundOf(scenario: ScenarioSpec): ControllerSpec {
  return scenario.setpointStepC !== 0 ? smallStepBound(scenario) : TIME_OPTIMAL_BOUND;
}

const jsonOnly = process.argv.includes('--json');
const startedMs = performance.now();

const results: RunResult[] = [];
for (const plant of PLANTS) {
  const controllers = CONTROLLERS.filter((c) => c.actuators.includes(plant.actuator));
  for (const scenario of BENCH_SCENARIOS) {
    const bound = simulate(plant, scenario, boundOf(scenario));
    for (const controller of controllers) {
      const metrics = controller === TIME_OPTIMAL_BOUND ? bound : simulate(plant, scenario, controller);
      results.push(withRatios(plant.id, scenario.id, controller.id, metrics, bound));
    }
  }
}
const targets = checkTargets(results);

/**
 * The act step's cost: the reconcile path beside its bare PI on every plant (the issue's two
 * extra ones too) and scenario, with the writes it sent, at the act step's send resolution and
 * at coarser ones (0.005 was the old level tolerance) to show where a cost would come from.
 */
const SEND_RESOLUTIONS = [undefined, 0.005] as const;
const bare = HOMEOSTAT.find((c) => c.id === 'homeostat PI');
if (bare === undefined) throw new Error('bench: no homeostat PI');
const actStep: ActStepRow[] = [];
for (const plant of [...PLANTS, ...ACT_STEP_PLANTS] as BenchPlant[]) {
  for (const scenario of BENCH_SCENARIOS) {
    const bareMetrics = simulate(plant, scenario, bare);
    for (const sendResolution of SEND_RESOLUTIONS) {
      const count: WriteCount = { writes: 0 };
      const path = homeostatReconcile('reconcile', '', {
        count,
        ...(sendResolution === undefined ? {} : { sendResolution }),
      });
      const metrics = simulate(plant, scenario, path);
      const hours = (2 * plant.horizonS) / 3600;
      actStep.push({
        plant: plant.id,
        scenario: scenario.id,
        sendResolution: sendResolution ?? null,
        bareIae: bareMetrics.iae,
        iae: metrics.iae,
        writesPerHour:
          count.writes / (scenario.setpointStepC !== 0 || scenario.disturbanceC !== 0 ? hours : hours / 2),
      });
    }
  }
}

/** Target 5 hinges on the window: how IAE and switching trade off on the relay plants. */
const SWEEP_WINDOWS_S = [120, 180, 300, 450, 600, 900, 1200];
const windowSweep: WindowSweepRow[] = [];
for (const plant of RELAY_PLANTS) {
  for (const scenario of SCENARIOS.filter((s) => s.id === 'A' || s.id === 'B')) {
    const ha = results.find(
      (r) => r.plant === plant.id && r.scenario === scenario.id && r.controller === 'HA hysteresis',
    );
    if (ha === undefined) throw new Error(`bench: no HA result for ${plant.id}/${scenario.id}`);
    for (const windowS of SWEEP_WINDOWS_S) {
      const metrics = simulate(plant, scenario, homeostatRelayWindow(windowS));
      windowSweep.push({
        plant: plant.id,
        scenario: scenario.id,
        windowS,
        iae: metrics.iae,
        switchesPerHour: metrics.switchesPerHour,
        haIae: ha.metrics.iae,
        haSwitchesPerHour: ha.metrics.switchesPerHour,
      });
    }
  }
}
/** Measured-disturbance feedforward and the setpoint feedforward's steps (feedforward.ts). */
const feedforward = feedforwardSection();
/** Autotune on five plants beside SIMC on the true model and the peers' relay + Ziegler–Nichols. */
const autotune = runAutotuneBench({ outDir: autotuneOutDir() });
const elapsedS = (performance.now() - startedMs) / 1000;

/** `--out DIR`: where the autotune's step-response SVGs and summary.json go. */
function autotuneOutDir(): string {
  const at = process.argv.indexOf('--out');
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : DEFAULT_OUT_DIR;
}

const versions = { node: process.version, ...peerVersions() };
const settings = {
  plantStepS: STEP_S,
  regularPeriodS: REGULAR_PERIOD_S,
  irregularPeriodS: [IRREGULAR_MIN_S, IRREGULAR_MAX_S],
  timeProportioning: TIME_PROPORTIONING,
  bandC: BAND_C,
  relayDefaults: {
    modulation: DEFAULT_MODULATION,
    band: DEFAULT_BAND,
    maxHalfBand: DEFAULT_MAX_HALF_BAND,
    windowS: DEFAULT_WINDOW_S,
  },
  metricsOn: 'true plant value, one horizon from the scenario event',
};

if (jsonOnly) {
  const plants = PLANTS.map((p) => ({ ...p, tuning: simcTuning(p) }));
  const controllers = CONTROLLERS.map(({ id, note, actuators }) => ({ id, note, actuators }));
  process.stdout.write(
    `${JSON.stringify(
      {
        versions,
        settings,
        plants,
        scenarios: BENCH_SCENARIOS,
        controllers,
        results,
        targets,
        windowSweep,
        actStep,
        feedforward: { disturbance: feedforward.disturbance, steps: feedforward.steps },
        autotune: {
          rows: autotune.rows,
          spread: autotune.spread,
          targets: autotune.targets,
          equalConstraint: autotune.equalConstraint,
        },
      },
      null,
      2,
    )}\n`,
  );
} else {
  const out: string[] = [];
  out.push(
    '# homeostat control benchmark',
    `versions: ${Object.entries(versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')}`,
    `plant step ${STEP_S} s (exact FOPDT solution); readings every ${REGULAR_PERIOD_S} s, or ` +
      `${IRREGULAR_MIN_S}–${IRREGULAR_MAX_S} s in C; outputs held between readings and clamped to 0..1`,
    `relay plants: homeostat drives the relay by time-proportioning (window ${TIME_PROPORTIONING.windowMs / 1000} s, ` +
      `min on/off ${TIME_PROPORTIONING.minOnMs / 1000}/${TIME_PROPORTIONING.minOffMs / 1000} s); ` +
      `the "band" rows by the duty band (half band kp · ${BAND_C} °C, same min on/off)`,
    `"homeostat defaults": the relay's config keys all left out, i.e. modulation ${DEFAULT_MODULATION}, ` +
      `band ${DEFAULT_BAND} (half band kp · ${DEFAULT_BAND}, at most ${DEFAULT_MAX_HALF_BAND}), no minimum on/off times ` +
      `(window ${DEFAULT_WINDOW_S} s only when windowS or modulation window is written)`,
    `scenarios: ${BENCH_SCENARIOS.map((s) => `${s.id} ${s.label}`).join('; ')}`,
    'metrics on the true plant value over one horizon from the event (step at 0, disturbance one horizon later);',
    'IAE ∫|e|dt; overshoot max(value − setpoint, 0); settle: time after which |e| stays within the band',
    '("—": not settled); TV Σ|Δu|; sw/h relay switches per hour; ×bound: ratio to the bound ("—": bound is 0)',
    '',
    'controllers:',
    ...CONTROLLERS.map((c) => `  ${c.id.padEnd(20)} ${c.note}`),
    "all PIDs get the plant's SIMC PI tuning (Td 0) unless stated; no bias or integrator preload.",
    'B: any PI with the same kp and Ti that does not overshoot has IAE = Δu·Ti/kp, hence identical rows.',
  );
  out.push(formatTable(PLANTS, results));
  out.push('', '# targets (room plant; relay plants for 5)', formatTargets(targets));
  out.push(
    '',
    '# act step: homeostat reconcile (whole cycle, config → toLoopSpec) vs homeostat PI (pidStep alone)',
    'relay plants: both by 600 s windows with min on/off 30 s; writes per hour of the run (both horizons);',
    `send resolution "act step": command.ts as it is; 0.005: commands only on moves of 0.005 (the old level tolerance)`,
    formatActStep(actStep),
  );
  out.push(
    '',
    '# relay time-proportioning window vs HA hysteresis (homeostat PI, min on/off unchanged; info for target 5)',
    formatWindowSweep(windowSweep),
  );
  out.push('', feedforward.text, '', autotune.text);
  out.push(
    '',
    `${results.length + windowSweep.length + actStep.length} runs (and the feedforward and autotune sections) in ${elapsedS.toFixed(1)} s`,
    '',
    '# JSON',
  );
  out.push(
    JSON.stringify({
      versions,
      settings,
      results,
      targets,
      windowSweep,
      actStep,
      feedforward: { disturbance: feedforward.disturbance, steps: feedforward.steps },
      autotune: {
        rows: autotune.rows,
        spread: autotune.spread,
        targets: autotune.targets,
        equalConstraint: autotune.equalConstraint,
      },
    }),
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
