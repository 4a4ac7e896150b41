/**
 * Relay defaults against Home Assistant's hysteresis ("defaults must never be worse
 * than the thermostat people replace"), `node --import tsx test/bench/control/relay-defaults.ts`.
 * A scratch runner like relay-explore.ts, kept as the evidence for the default band: it is not
 * part of `bench:control`'s output.
 *
 * Candidates: the duty band (PI as the config gives it, SIMC kp and Ti, Td 0) with half band
 * kp · band around a duty centre c, no minimum times (the config's defaults), on the bench's two
 * relay plants and five scenarios; a candidate wins a row when its IAE is no higher than HA's
 * and its switches per hour no more. Then the same on the plants with their setpoint moved by
 * up to ±0.2 °C, which moves the holding output a little off 0.5 and the readings' phase
 * against the ripple: a rule that only wins the bench rows by where its switches happen to
 * fall loses there.
 *
 * Why no band wins every row (measured 2026-11, see the report): on the room plant the holding
 * output is 0.5, so heating and cooling slopes are equal and HA's ±0.3 °C hysteresis gives a
 * strictly periodic triangle ripple centred on the setpoint. For a given number of switches no
 * relay rule has a smaller ripple IAE than that (IAE × switches is fixed by the slopes). The
 * PI band reaches the same triangle only on average: its integral swings by ≈ ±0.1 °C within
 * each cycle (∫e/Ti over a half period), so its periods jitter and it ties or loses by a few %
 * depending on where 10 s readings fall. It wins clearly where the slopes differ (load
 * disturbance B: HA's ripple then sits off the setpoint, the integral centres the band's).
 * A wider search (band 0.10–0.40 °C, centre 0.2–0.7, minimum on/off 0–120 s, 900 candidates)
 * found none that wins all ten rows; minimum times below the ripple's half period (≈ 170 s on
 * the room) change nothing, and 120 s costs the room's disturbance row.
 */
import { type ControllerResult, controllerOutput } from '../../../src/core/controller-output.js';
import { dutyBand } from '../../../src/core/duty-band.js';
import type { LoopSpec } from '../../../src/core/loop-spec.js';
import { pidInitialMemory } from '../../../src/core/pid.js';
import type { TimeProportioningMemory } from '../../../src/core/time-proportioning.js';
import { DEFAULT_BAND } from '../../../src/kinds/fields.js';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';
import type { RunMetrics } from './metrics.js';
import { PEERS } from './peers.js';
import { type PlantSpec, RELAY_PLANTS } from './plants.js';
import { HOMEOSTAT_DEFAULTS } from './reconcile-path.js';
import { BENCH_SCENARIOS } from './scenarios.js';
import { simulate } from './simulate.js';

const HEATER = 'heater';

/** A duty band candidate: half band kp · bandC around duty `centre`. */
interface BandCandidate {
  label: string;
  bandC: number;
  centre: number;
}

const CANDIDATES: readonly BandCandidate[] = [
  { label: `band ${DEFAULT_BAND} c0.5 (default)`, bandC: DEFAULT_BAND, centre: 0.5 },
  { label: 'band 0.15 c0.5', bandC: 0.15, centre: 0.5 },
  { label: 'band 0.2 c0.5', bandC: 0.2, centre: 0.5 },
  { label: 'band 0.3 c0.5', bandC: 0.3, centre: 0.5 },
  { label: 'band 0.2 c0.35', bandC: 0.2, centre: 0.35 },
  { label: 'band 0.25 c0.35', bandC: 0.25, centre: 0.35 },
  { label: 'band 0.26 c0.35', bandC: 0.26, centre: 0.35 },
  { label: 'band 0.2 c0.6', bandC: 0.2, centre: 0.6 },
];

/** Setpoint offsets of the robustness pass, °C. */
const SETPOINT_OFFSETS_C = [-0.2, -0.1, -0.05, 0, 0.05, 0.1, 0.2];

function loopSpec({ plant, tuning }: ControllerContext): LoopSpec {
  return {
    id: plant.id,
    quantity: 'temperature',
    controller: { type: 'pid', pid: { kp: tuning.kp, tiS: tuning.tiS, tdS: 0 } },
    raise: { id: HEATER, kind: 'continuous', safeLevel: 0 },
    staleAfterMs: 120_000,
    plausibleMin: -55,
    plausibleMax: 125,
    deadband: 0,
    changeoverMs: 0,
    keepAliveMs: 60_000,
    retryInitialMs: 5_000,
    convergedBand: 0.5,
  };
}

/**
 * homeostat's PI step on each reading; the relay by `dutyBand` on the duty shifted by 0.5 − c,
 * which puts the band's centre at duty c (the same thresholds c ± h, inside 0..1 here).
 */
class CentredBand implements BenchController {
  private readonly spec: LoopSpec;
  private readonly halfBand: number;
  private control: Omit<ControllerResult, 'output'> & { regulating: boolean } = {
    regulating: false,
    pid: pidInitialMemory(),
    hysteresisOn: { raise: false, lower: false },
  };
  private output = 0;
  private relay: Pick<TimeProportioningMemory, 'isOn' | 'lastSwitchMs'> = { isOn: false };

  constructor(
    context: ControllerContext,
    private readonly candidate: BandCandidate,
  ) {
    this.spec = loopSpec(context);
    this.halfBand = context.tuning.kp * candidate.bandC;
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    const result = controllerOutput(
      this.spec,
      { generation: 1, setpoint, mode: 'heat' },
      { reading: { value: measured, atMs }, actuators: { [HEATER]: this.output } },
      measured,
      this.control,
    );
    this.control = { regulating: true, pid: result.pid, hysteresisOn: result.hysteresisOn };
    this.output = result.output;
  }

  levelAt(atMs: number): number {
    const shifted = this.output + 0.5 - this.candidate.centre;
    const result = dutyBand(shifted, this.relay, atMs, { halfBand: this.halfBand, minOnMs: 0, minOffMs: 0 });
    this.relay = result.memory;
    return result.on ? 1 : 0;
  }
}

function candidateSpec(candidate: BandCandidate): ControllerSpec {
  // The default itself goes through the whole reconcile path, config keys left out.
  if (candidate.bandC === DEFAULT_BAND && candidate.centre === 0.5) return HOMEOSTAT_DEFAULTS;
  return {
    id: candidate.label,
    actuators: ['relay'],
    note: '',
    create: (context) => new CentredBand(context, candidate),
  };
}

const HA = PEERS.find((p) => p.id === 'HA hysteresis');
if (HA === undefined) throw new Error('bench: no HA hysteresis peer');

const winsOver = (m: RunMetrics, ha: RunMetrics) =>
  m.iae <= ha.iae && (m.switchesPerHour ?? 0) <= (ha.switchesPerHour ?? 0);

const cell = (m: RunMetrics, ha: RunMetrics) => {
  const delta = (100 * (m.iae / ha.iae - 1)).toFixed(1);
  const sw = (m.switchesPerHour ?? 0).toFixed(1);
  return `${delta.padStart(5)}% ${sw.padStart(4)}${winsOver(m, ha) ? ' ' : '×'}`;
};

const out: string[] = [
  '# relay defaults vs HA hysteresis (PI as configured, band kp·b around duty c, no min on/off)',
  'cells: IAE vs HA (%), switches/h, × = loses (IAE higher or more switches)',
];
const specs = CANDIDATES.map(candidateSpec);
out.push(`${'plant       sc   HA IAE  sw/h'} | ${CANDIDATES.map((c) => c.label.padEnd(18)).join(' | ')}`);
const wins = CANDIDATES.map(() => 0);
for (const plant of RELAY_PLANTS) {
  for (const scenario of BENCH_SCENARIOS) {
    const ha = simulate(plant, scenario, HA);
    const cells = specs.map((spec, i) => {
      const m = simulate(plant, scenario, spec);
      if (winsOver(m, ha)) wins[i]!++;
      return cell(m, ha).padEnd(18);
    });
    const head = `${plant.id.padEnd(11)} ${scenario.id}  ${ha.iae.toFixed(0).padStart(7)} ${(ha.switchesPerHour ?? 0).toFixed(1).padStart(5)}`;
    out.push(`${head} | ${cells.join(' | ')}`);
  }
}
const rows = RELAY_PLANTS.length * BENCH_SCENARIOS.length;
out.push(`${'rows won'.padEnd(30)} | ${wins.map((w) => `${w}/${rows}`.padEnd(18)).join(' | ')}`);

out.push(
  '',
  `# robustness: setpoint moved by ${SETPOINT_OFFSETS_C.join(', ')} °C on both plants, all scenarios`,
);
out.push('candidate                  rows won   IAE ≤ HA   sw ≤ HA   geo-mean (IAE·sw)/(HA IAE·sw)');
for (const [i, candidate] of CANDIDATES.entries()) {
  let won = 0;
  let iaeOk = 0;
  let swOk = 0;
  let logSum = 0;
  let n = 0;
  for (const base of RELAY_PLANTS) {
    for (const offsetC of SETPOINT_OFFSETS_C) {
      const plant: PlantSpec = { ...base, setpointC: base.setpointC + offsetC };
      for (const scenario of BENCH_SCENARIOS) {
        const ha = simulate(plant, scenario, HA);
        const m = simulate(plant, scenario, specs[i]!);
        n++;
        if (winsOver(m, ha)) won++;
        if (m.iae <= ha.iae) iaeOk++;
        if ((m.switchesPerHour ?? 0) <= (ha.switchesPerHour ?? 0)) swOk++;
        logSum += Math.log((m.iae * (m.switchesPerHour ?? 1)) / (ha.iae * (ha.switchesPerHour ?? 1)));
      }
    }
  }
  out.push(
    `${candidate.label.padEnd(26)} ${`${won}/${n}`.padStart(8)} ${String(iaeOk).padStart(10)} ${String(swOk).padStart(9)}   ${Math.exp(logSum / n).toFixed(3)}`,
  );
}
process.stdout.write(`${out.join('\n')}\n`);
