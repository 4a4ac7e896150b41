import { formatElapsed as duration } from '../core/time.js';
import type { AutotuneView, LoopTuningView } from './api-client.js';
import type { AutotuneCommandOptions } from './autotune.js';

/** What `homeostat autotune` prints: the equipment line, progress lines and the result. */

/** The daemon's default time limit (core/tuning/autotune.ts DEFAULT_MAX_DURATION_MS). */
const DEFAULT_LIMIT_MS = 48 * 3_600_000;

export function active(run: AutotuneView): boolean {
  return run.phase === 'noise' || run.phase === 'relay';
}

export const msOf = (ms: number | null | undefined, s: number | null | undefined) =>
  typeof ms === 'number' ? ms : typeof s === 'number' ? s * 1000 : undefined;

/** What the run does to the equipment, in one line. */
export function equipmentLine(
  view: Pick<LoopTuningView, 'quantity' | 'unit' | 'mode' | 'setpoint' | 'actuators' | 'step'>,
  opts: Pick<AutotuneCommandOptions, 'side' | 'maxDurationS'>,
  run?: AutotuneView,
): string {
  const side = (run?.side ?? opts.side ?? sideOfMode(view.mode)) as 'raise' | 'lower' | undefined;
  const ids = Object.keys(view.actuators);
  const what = equipmentWord(view.quantity, side);
  const named = ids.length === 1 ? `${what} (${ids[0]})` : what;
  const digits = Math.max(1, decimalsOf(view.step ?? 0.1));
  const limitMs =
    run && run.phase === 'noise' && run.remainingIsLimit
      ? (msOf(run.elapsedMs, run.elapsedS) ?? 0) + (msOf(run.remainingMs, run.remainingS) ?? 0)
      : opts.maxDurationS === undefined
        ? DEFAULT_LIMIT_MS
        : opts.maxDurationS * 1000;
  return `switches ${named} on and off around ${view.setpoint.toFixed(digits)} ${view.unit} until the oscillation is steady; at most ${duration(limitMs)}; the safety limits stay active; Ctrl-C stops watching, not the run`;
}

function sideOfMode(mode: string): 'raise' | 'lower' | undefined {
  if (mode === 'heat' || mode === 'humidify') return 'raise';
  if (mode === 'cool' || mode === 'dehumidify') return 'lower';
  return undefined;
}

function equipmentWord(quantity: string, side: 'raise' | 'lower' | undefined): string {
  if (side === undefined) return 'the actuator';
  if (quantity === 'temperature') return side === 'raise' ? 'the heater' : 'the cooler';
  if (quantity === 'humidity') return side === 'raise' ? 'the humidifier' : 'the dehumidifier';
  return side === 'raise' ? 'the raising actuator' : 'the lowering actuator';
}

/** One progress line and what makes it new (phase and cycles; time alone does not). */
export function progressLine(
  view: Pick<LoopTuningView, 'unit'>,
  run: AutotuneView,
): { key: string; text: string } {
  const elapsed = duration(msOf(run.elapsedMs, run.elapsedS) ?? 0);
  const remainingMs = msOf(run.remainingMs, run.remainingS);
  const left =
    remainingMs === undefined
      ? ''
      : ` · ${run.remainingIsLimit ? 'at most' : 'about'} ${duration(remainingMs)} left`;
  if (run.phase === 'noise') {
    return {
      key: 'noise',
      text: `measuring the sensor noise (output held) · elapsed ${elapsed}${left}`,
    };
  }
  const cycles = `cycles ${run.cycles ?? 0}/${run.cyclesNeeded ?? '?'}`;
  const band =
    typeof run.hysteresis === 'number' ? ` · band ±${significant(run.hysteresis)} ${view.unit}` : '';
  return { key: `${run.phase} ${cycles}`, text: `relay ${cycles}${band} · elapsed ${elapsed}${left}` };
}

/** The result: model ± standard error, gains, suggested modulation (lines without the loop). */
export function resultLines(run: AutotuneView, unit: string): string[] {
  const r = run.result;
  if (!r) return [];
  const took = msOf(run.elapsedMs, run.elapsedS);
  const se = r.standardError;
  const ambient = typeof r.ambient === 'number' ? `, ambient ${significant(r.ambient)} ${unit}` : '';
  const residual =
    typeof r.rmsResidual === 'number' ? `; rms residual ${significant(r.rmsResidual)} ${unit}` : '';
  const closed = typeof r.closedLoopS === 'number' ? ` (SIMC, τc ${significant(r.closedLoopS)} s)` : '';
  const weight =
    typeof r.setpointWeight === 'number' ? `, setpoint weight ${significant(r.setpointWeight)}` : '';
  const lines = [
    `autotune done: ${run.cycles ?? '?'} cycles${took === undefined ? '' : ` in ${duration(took)}`}`,
    `model: gain ${plusMinus(r.gain, se?.gain)} ${unit} at full output, τ ${plusMinus(r.timeConstantS, se?.timeConstantS)} s, θ ${plusMinus(r.deadTimeS, se?.deadTimeS)} s${ambient}${residual}`,
    `gains: kp ${significant(r.kp)}, tiS ${significant(r.tiS)}, tdS ${significant(r.tdS)}${weight}${closed}`,
  ];
  if (typeof r.windowS === 'number') {
    const band = typeof r.band === 'number' ? ` (or a duty band of ±${significant(r.band)} ${unit})` : '';
    lines.push(
      `suggested relay modulation: a time-proportioning window of ${significant(r.windowS)} s${band}`,
    );
  }
  return lines;
}

function plusMinus(value: number, se: number | null | undefined): string {
  return typeof se === 'number' && Number.isFinite(se)
    ? `${significant(value)} ± ${significant(se)}`
    : `${significant(value)} (± unknown)`;
}

/** Three significant digits, never in exponent notation (below 0.001: six decimals at most). */
export function significant(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) < 0.001)
    return value
      .toFixed(6)
      .replace(/\.?0+$/, '')
      .replace(/^-0$/, '0');
  return String(Number(value.toPrecision(3)));
}

const decimalsOf = (step: number) => (String(step).split('.')[1] ?? '').length;
