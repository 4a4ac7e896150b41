/**
 * Control benchmark (`npm run bench:control`, `-- --json` for JSON only): homeostat's
 * controller beside the PID packages Node users install, Home Assistant's hysteresis rule and
 * the time-optimal bound, on simulated FOPDT plants through four scenarios. Prints figures;
 * it is not a test and always exits 0 (unless it crashes).
 */
import { TIME_OPTIMAL_BOUND } from './control/bound.js';
import type { ControllerSpec } from './control/controller.js';
import { BAND_C, HOMEOSTAT, homeostatRelayWindow, TIME_PROPORTIONING } from './control/homeostat.js';
import { PEERS, peerVersions } from './control/peers.js';
import { PLANTS, RELAY_PLANTS, simcTuning } from './control/plants.js';
import {
  formatTable,
  formatTargets,
  formatWindowSweep,
  type RunResult,
  type WindowSweepRow,
  withRatios,
} from './control/report.js';
import { IRREGULAR_MAX_S, IRREGULAR_MIN_S, REGULAR_PERIOD_S, SCENARIOS } from './control/scenarios.js';
import { STEP_S, simulate } from './control/simulate.js';
import { checkTargets } from './control/targets.js';

const CONTROLLERS: readonly ControllerSpec[] = [TIME_OPTIMAL_BOUND, ...HOMEOSTAT, ...PEERS];

const jsonOnly = process.argv.includes('--json');
const startedMs = performance.now();

const results: RunResult[] = [];
for (const plant of PLANTS) {
  const controllers = CONTROLLERS.filter((c) => c.actuators.includes(plant.actuator));
  for (const scenario of SCENARIOS) {
    const bound = simulate(plant, scenario, TIME_OPTIMAL_BOUND);
    for (const controller of controllers) {
      const metrics = controller === TIME_OPTIMAL_BOUND ? bound : simulate(plant, scenario, controller);
      results.push(withRatios(plant.id, scenario.id, controller.id, metrics, bound));
    }
  }
}
const targets = checkTargets(results);

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
const elapsedS = (performance.now() - startedMs) / 1000;

const versions = { node: process.version, ...peerVersions() };
const settings = {
  plantStepS: STEP_S,
  regularPeriodS: REGULAR_PERIOD_S,
  irregularPeriodS: [IRREGULAR_MIN_S, IRREGULAR_MAX_S],
  timeProportioning: TIME_PROPORTIONING,
  bandC: BAND_C,
  metricsOn: 'true plant value, one horizon from the scenario event',
};

if (jsonOnly) {
  const plants = PLANTS.map((p) => ({ ...p, tuning: simcTuning(p) }));
  const controllers = CONTROLLERS.map(({ id, note, actuators }) => ({ id, note, actuators }));
  process.stdout.write(
    `${JSON.stringify({ versions, settings, plants, scenarios: SCENARIOS, controllers, results, targets, windowSweep }, null, 2)}\n`,
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
    `scenarios: ${SCENARIOS.map((s) => `${s.id} ${s.label}`).join('; ')}`,
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
    '# relay time-proportioning window vs HA hysteresis (homeostat PI, min on/off unchanged; info for target 5)',
    formatWindowSweep(windowSweep),
  );
  out.push('', `${results.length + windowSweep.length} runs in ${elapsedS.toFixed(1)} s`, '', '# JSON');
  out.push(JSON.stringify({ versions, settings, results, targets, windowSweep }));
  process.stdout.write(`${out.join('\n')}\n`);
}
