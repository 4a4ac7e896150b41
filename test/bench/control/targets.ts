/**
 * The targets the issue sets for homeostat, checked on the results. They are printed with
 * their figures as PASS/FAIL; they never change the exit code (this is a benchmark, not a test).
 */
import type { RunResult, TargetCheck } from './report.js';
import type { ScenarioId } from './scenarios.js';

const ROOM = 'room';
const RELAY_PLANTS = ['room-relay', 'slow-relay'];
const PID_ALONE = ['homeostat PI', 'homeostat PID'];
/** Target 5: each PID alone on a relay, by time-proportioning (its plain id) and by the duty band. */
const RELAY_MODULATIONS: { controller: string; label: string }[] = [
  { controller: 'homeostat PI', label: 'homeostat PI+TP' },
  { controller: 'homeostat PID', label: 'homeostat PID+TP' },
  { controller: 'homeostat PI band', label: 'homeostat PI+band' },
  { controller: 'homeostat PID band', label: 'homeostat PID+band' },
  // The relay with nothing configured but the PID (defaults never worse than the
  // thermostat people replace), through the whole reconcile path.
  { controller: 'homeostat defaults', label: 'homeostat defaults' },
];
const WITH_MODEL = ['homeostat PI+ff', 'homeostat PID+ff'];
/** Each feedforward row and the same PID without the model. */
const MODEL_PAIRS: [string, string][] = [
  ['homeostat PI+ff', 'homeostat PI'],
  ['homeostat PID+ff', 'homeostat PID'],
];
/** Rounding-level differences (0.5 % of IAE, 0.005 °C) are not "worse". */
const IAE_SLACK = 1.005;
const OVERSHOOT_SLACK_C = 0.005;

function noWorse(withModel: RunResult, alone: RunResult): boolean {
  return (
    withModel.metrics.iae <= IAE_SLACK * alone.metrics.iae &&
    withModel.metrics.overshootC <= alone.metrics.overshootC + OVERSHOOT_SLACK_C
  );
}

/** The run where the model does worst against the PID alone (largest IAE ratio). */
function worstAgainst(
  results: readonly RunResult[],
  withModel: readonly RunResult[],
  alone: string,
):
  | {
      plant: string;
      scenario: ScenarioId;
      iae: number;
      aloneIae: number;
      overshootC: number;
      aloneOvershootC: number;
    }
  | undefined {
  let worst: ReturnType<typeof worstAgainst>;
  for (const run of withModel) {
    const other = find(results, run.plant, run.scenario, alone);
    const row = {
      plant: run.plant,
      scenario: run.scenario,
      iae: run.metrics.iae,
      aloneIae: other.metrics.iae,
      overshootC: run.metrics.overshootC,
      aloneOvershootC: other.metrics.overshootC,
    };
    if (worst === undefined || row.iae / row.aloneIae > worst.iae / worst.aloneIae) worst = row;
  }
  return worst;
}
const HA = 'HA hysteresis';

function find(
  results: readonly RunResult[],
  plant: string,
  scenario: ScenarioId,
  controller: string,
): RunResult {
  const found = results.find(
    (r) => r.plant === plant && r.scenario === scenario && r.controller === controller,
  );
  if (found === undefined) throw new Error(`bench: no result for ${plant}/${scenario}/${controller}`);
  return found;
}

function pct(value: number): string {
  return `${value >= 0 ? '+' : ''}${(100 * value).toFixed(1)} %`;
}

export function checkTargets(results: readonly RunResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];

  for (const controller of PID_ALONE) {
    const step = find(results, ROOM, 'A', controller);
    const iaeRatio = step.ratioToBound.iae ?? Number.POSITIVE_INFINITY;
    checks.push({
      target: 1,
      description: `${controller}: step IAE ≤ 1.17× bound, overshoot ≤ 0.1`,
      figures: `IAE ${iaeRatio.toFixed(3)}× bound, overshoot ${step.metrics.overshootC.toFixed(3)} °C`,
      pass: iaeRatio <= 1.17 && step.metrics.overshootC <= 0.1,
    });
  }

  // Target 2: the plant model never makes a loop worse than the same PID without it,
  // on any plant and scenario it runs on (it used to overshoot small setpoint steps).
  for (const [withModel, alone] of MODEL_PAIRS) {
    const pairs = results.filter((r) => r.controller === withModel);
    const worst = worstAgainst(results, pairs, alone);
    checks.push({
      target: 2,
      description: `${withModel} vs ${alone}: IAE and overshoot no worse on every plant and scenario`,
      figures: worst
        ? `worst ${worst.plant}/${worst.scenario}: IAE ${worst.iae.toFixed(0)} vs ${worst.aloneIae.toFixed(0)} °C·s, ` +
          `overshoot ${worst.overshootC.toFixed(3)} vs ${worst.aloneOvershootC.toFixed(3)} °C (${pairs.length} runs)`
        : 'no runs',
      pass: worst !== undefined && pairs.every((r) => noWorse(r, find(results, r.plant, r.scenario, alone))),
    });
  }

  for (const controller of [...PID_ALONE, ...WITH_MODEL]) {
    const regular = find(results, ROOM, 'A', controller).metrics.iae;
    const irregular = find(results, ROOM, 'C', controller).metrics.iae;
    const degradation = irregular / regular - 1;
    checks.push({
      target: 3,
      description: `${controller}: irregular readings IAE ≤ +10 %`,
      figures: `IAE ${irregular.toFixed(0)} vs ${regular.toFixed(0)} °C·s regular (${pct(degradation)})`,
      pass: degradation <= 0.1,
    });
  }

  for (const controller of [...PID_ALONE, ...WITH_MODEL]) {
    const clean = find(results, ROOM, 'A', controller).metrics.totalVariation;
    const quantized = find(results, ROOM, 'D', controller).metrics.totalVariation;
    checks.push({
      target: 4,
      description: `${controller}: quantized sensor TV ≤ 2× clean`,
      figures: `TV ${quantized.toFixed(2)} vs ${clean.toFixed(2)} clean (${(quantized / clean).toFixed(2)}×)`,
      pass: quantized <= 2 * clean,
    });
  }

  for (const plant of RELAY_PLANTS) {
    for (const scenario of ['A', 'B'] as const) {
      const ha = find(results, plant, scenario, HA).metrics;
      for (const { controller, label } of RELAY_MODULATIONS) {
        const ours = find(results, plant, scenario, controller).metrics;
        // Relay runs always count switches; NaN (never passes) if one did not.
        const ourSwitches = ours.switchesPerHour ?? Number.NaN;
        const haSwitches = ha.switchesPerHour ?? Number.NaN;
        checks.push({
          target: 5,
          description: `${plant} ${scenario}: ${label} vs HA hysteresis`,
          figures:
            `IAE ${ours.iae.toFixed(0)} vs ${ha.iae.toFixed(0)} °C·s, ` +
            `switches ${ourSwitches.toFixed(1)} vs ${haSwitches.toFixed(1)} /h`,
          pass: ours.iae < ha.iae && ourSwitches <= haSwitches,
        });
      }
    }
  }

  return checks;
}
