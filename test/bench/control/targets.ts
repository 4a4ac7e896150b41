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
  // The relay with nothing configured but the PID (issue 12: defaults never worse than the
  // thermostat people replace), through the whole reconcile path.
  { controller: 'homeostat defaults', label: 'homeostat defaults' },
];
const WITH_MODEL = ['homeostat PI+ff', 'homeostat PID+ff'];
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

  for (const controller of WITH_MODEL) {
    const step = find(results, ROOM, 'A', controller);
    const iaeRatio = step.ratioToBound.iae ?? Number.POSITIVE_INFINITY;
    checks.push({
      target: 2,
      description: `${controller}: step IAE ≤ 1.07× bound`,
      figures: `IAE ${iaeRatio.toFixed(3)}× bound, overshoot ${step.metrics.overshootC.toFixed(3)} °C`,
      pass: iaeRatio <= 1.07,
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
