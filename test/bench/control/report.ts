/**
 * Printing of the benchmark: the results table (with ratios to the time-optimal bound), the
 * targets the issue sets for homeostat, and the JSON form of both.
 */
import { type RunMetrics, ratio } from './metrics.js';
import { type PlantSpec, simcTuning } from './plants.js';
import type { ScenarioId } from './scenarios.js';

export interface RunResult {
  plant: string;
  scenario: ScenarioId;
  controller: string;
  metrics: RunMetrics;
  /** Each metric divided by the bound's on the same plant and scenario; null where the bound's is 0. */
  ratioToBound: Record<keyof RunMetrics, number | null>;
}

export function withRatios(
  plant: string,
  scenario: ScenarioId,
  controller: string,
  metrics: RunMetrics,
  bound: RunMetrics,
): RunResult {
  const ratioToBound = {
    iae: ratio(metrics.iae, bound.iae),
    overshootC: ratio(metrics.overshootC, bound.overshootC),
    settlingS: ratio(metrics.settlingS, bound.settlingS),
    totalVariation: ratio(metrics.totalVariation, bound.totalVariation),
    switchesPerHour: ratio(metrics.switchesPerHour, bound.switchesPerHour),
  };
  return { plant, scenario, controller, metrics, ratioToBound };
}

// --- table ---------------------------------------------------------------------------------

function fixed(value: number | null, digits: number): string {
  return value === null ? '—' : value.toFixed(digits);
}

function times(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(2)}×`;
}

const COLUMNS: { title: string; width: number; cell: (r: RunResult) => string }[] = [
  { title: 'scen', width: 4, cell: (r) => r.scenario },
  { title: 'controller', width: 20, cell: (r) => r.controller },
  { title: 'IAE °C·s', width: 9, cell: (r) => fixed(r.metrics.iae, 0) },
  { title: '×bound', width: 8, cell: (r) => times(r.ratioToBound.iae) },
  { title: 'overshoot', width: 9, cell: (r) => fixed(r.metrics.overshootC, 3) },
  { title: 'settle s', width: 8, cell: (r) => fixed(r.metrics.settlingS, 0) },
  { title: '×bound', width: 8, cell: (r) => times(r.ratioToBound.settlingS) },
  { title: 'TV Σ|Δu|', width: 9, cell: (r) => fixed(r.metrics.totalVariation, 2) },
  { title: '×bound', width: 8, cell: (r) => times(r.ratioToBound.totalVariation) },
  { title: 'sw/h', width: 6, cell: (r) => fixed(r.metrics.switchesPerHour, 1) },
];

function row(cells: string[]): string {
  return cells
    .map((cell, i) => (i < 2 ? cell.padEnd(COLUMNS[i]!.width) : cell.padStart(COLUMNS[i]!.width)))
    .join(' ');
}

export function formatTable(plants: readonly PlantSpec[], results: readonly RunResult[]): string {
  const lines: string[] = [];
  const header = row(COLUMNS.map((c) => c.title));
  for (const plant of plants) {
    const tuning = simcTuning(plant);
    lines.push(
      '',
      `## ${plant.id}: ${plant.label}; ambient ${plant.ambientC} → setpoint ${plant.setpointC} °C; ` +
        `SIMC kp ${tuning.kp.toFixed(3)}, Ti ${tuning.tiS} s; horizon ${plant.horizonS / 3600} h; ` +
        `settling band ±${plant.settlingBandC} °C`,
      header,
      '-'.repeat(header.length),
    );
    let lastScenario: string | undefined;
    for (const result of results.filter((r) => r.plant === plant.id)) {
      if (lastScenario !== undefined && result.scenario !== lastScenario) lines.push('');
      lastScenario = result.scenario;
      lines.push(row(COLUMNS.map((c) => c.cell(result))));
    }
  }
  return lines.join('\n');
}

// --- targets -------------------------------------------------------------------------------

export interface TargetCheck {
  target: number;
  description: string;
  /** The figures the verdict rests on, printed after it. */
  figures: string;
  pass: boolean;
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  return checks
    .map((c) => `${c.pass ? 'PASS' : 'FAIL'}  ${c.target}. ${c.description.padEnd(44)} ${c.figures}`)
    .join('\n');
}

// --- time-proportioning window sweep ---------------------------------------------------------

/** homeostat PI on a relay plant with one window, beside HA's hysteresis on the same run. */
export interface WindowSweepRow {
  plant: string;
  scenario: ScenarioId;
  windowS: number;
  iae: number;
  switchesPerHour: number | null;
  haIae: number;
  haSwitchesPerHour: number | null;
}

export function formatWindowSweep(rows: readonly WindowSweepRow[]): string {
  const lines = [
    `${'plant'.padEnd(11)} scen ${'window s'.padStart(8)} ${'IAE °C·s'.padStart(9)} ${'sw/h'.padStart(6)}   ` +
      `${'HA IAE'.padStart(7)} ${'HA sw/h'.padStart(7)}   better IAE, no more switches`,
  ];
  for (const r of rows) {
    const beats = r.iae < r.haIae && (r.switchesPerHour ?? 0) <= (r.haSwitchesPerHour ?? 0);
    lines.push(
      `${r.plant.padEnd(11)} ${r.scenario.padEnd(4)} ${String(r.windowS).padStart(8)} ` +
        `${r.iae.toFixed(0).padStart(9)} ${fixed(r.switchesPerHour, 1).padStart(6)}   ` +
        `${r.haIae.toFixed(0).padStart(7)} ${fixed(r.haSwitchesPerHour, 1).padStart(7)}   ${beats ? 'yes' : 'no'}`,
    );
  }
  return lines.join('\n');
}

// --- act step: reconcile path vs bare PI --------------------------------------------------

/** The reconcile path and its bare PI on the same run, with the writes the path sent. */
export interface ActStepRow {
  plant: string;
  scenario: ScenarioId;
  /** The act step's send resolution in this run; null: command.ts's own. */
  sendResolution: number | null;
  bareIae: number;
  iae: number;
  writesPerHour: number;
}

export function formatActStep(rows: readonly ActStepRow[]): string {
  const lines = [
    `${'plant'.padEnd(13)} scen ${'send res.'.padStart(9)} ${'bare IAE'.padStart(9)} ${'path IAE'.padStart(9)} ` +
      `${'path/bare'.padStart(9)} ${'writes/h'.padStart(8)}`,
  ];
  for (const r of rows) {
    lines.push(
      `${r.plant.padEnd(13)} ${r.scenario.padEnd(4)} ${(r.sendResolution === null ? 'act step' : String(r.sendResolution)).padStart(9)} ` +
        `${r.bareIae.toFixed(1).padStart(9)} ${r.iae.toFixed(1).padStart(9)} ` +
        `${(r.iae / r.bareIae).toFixed(3).padStart(9)} ${r.writesPerHour.toFixed(1).padStart(8)}`,
    );
  }
  return lines.join('\n');
}
