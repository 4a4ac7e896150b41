import type { LoopStatus } from './core/status.js';
import type { Condition, ConditionType, Quantity } from './core/types.js';

/**
 * One readable line per loop for logs and terminals:
 * `room  20.06 °C → 20 °C  heat  output 43 %  heating  [Converged]`
 */
export function formatStatusLine(status: LoopStatus, unit: string): string {
  const measured = status.measured === undefined ? '—' : `${status.measured.toFixed(2)} ${unit}`;
  const output = `${Math.round(status.output * 100)} %`;
  const problems = status.conditions.filter(isProblem).map(flagText);
  const flags = problems.length > 0 ? problems.join(' ') : 'ok';
  return `${status.loop}  ${measured} → ${status.setpoint} ${unit}  ${status.mode}  output ${output}  ${status.action}${autotuneNote(status)}  [${flags}]${sensorsNote(status)}`;
}

/** A loop with several sensors: `  sensors: median of 3 (dropped b: stale)`, else nothing. */
function sensorsNote(status: LoopStatus): string {
  return status.sensors === undefined ? '' : `  sensors: ${status.sensors.summary}`;
}

/**
 * Which sensors of a set are dropped and why (`b Stale, c Outlier`): a sensor lost or back is
 * worth a line; its distance moving every cycle is not.
 */
function droppedSensors(status: LoopStatus): string | undefined {
  return status.sensors?.dropped.map((d) => `${d.sensor} ${d.reason}`).join(', ');
}

/** A running autotune's phase and cycles (`  autotune relay 1/2`), else nothing. */
function autotuneNote(status: LoopStatus): string {
  const run = status.autotune;
  if (run === undefined || (run.phase !== 'noise' && run.phase !== 'relay')) return '';
  return run.phase === 'noise' ? '  autotune noise' : `  autotune relay ${run.cycles}/${run.cyclesNeeded}`;
}

/**
 * Faulted and Interlocked report trouble when True; Autotuning only when a run was aborted (a
 * finished one, or none, is no trouble); the others when not True.
 */
function isProblem(c: Condition): boolean {
  if (c.type === 'Faulted' || c.type === 'Interlocked') return c.status === 'True';
  if (c.type === 'Autotuning') return c.status === 'False' && c.reason === 'Aborted';
  return c.status !== 'True';
}

function flagText(c: Condition): string {
  return `${c.type}=${c.status}(${c.reason})`;
}

/** What a status line said when it was written: what the next one is compared with. */
export interface WrittenStatusLine {
  mode: string;
  setpoint: number;
  action: string;
  measured: number | undefined;
  /** Each condition's flag as the line shows it (`ok` when it shows none). */
  flags: Map<ConditionType, string>;
  /** Clock time it was written, ms. */
  atMs: number;
  /** A loop with several sensors: the ones dropped and why (absent: one sensor). */
  droppedSensors?: string;
}

export function writtenStatusLine(status: LoopStatus, atMs: number): WrittenStatusLine {
  return {
    mode: status.mode,
    setpoint: status.setpoint,
    action: status.action,
    measured: status.measured,
    flags: new Map(status.conditions.map((c) => [c.type, isProblem(c) ? flagText(c) : 'ok'])),
    atMs,
    ...(status.sensors === undefined ? {} : { droppedSensors: droppedSensors(status) ?? '' }),
  };
}

/**
 * Conditions that wiggle with regulation itself: a noisy reading at the edge of the converged
 * band, an actuator waiting a moment for its confirmation. Their change counts once it has held
 * SETTLE_MS; the others (a sensor lost, a fault, an interlock, the database) at once.
 */
const WIGGLING_CONDITIONS: ReadonlySet<ConditionType> = new Set(['Converged', 'ActuatorConfirmed']);

/**
 * How long a wiggling change (a wiggling condition, the action) must hold before a status line
 * says so, ms. The action wiggles too: a loop near balance (a fermenter in a warm cellar) has an
 * output that crosses zero every few minutes, cooling, idle, cooling (npm run bench:journal).
 */
export const SETTLE_MS = 600_000;

/**
 * How far the measured value's distance from the setpoint must move from the last line's to be
 * worth a new line: 1 °C,
 * 3 %RH (sensor noise of ±1 %RH is common), and for other quantities 5 % of the setpoint (at
 * least 1 of its unit). Steps smaller than that show in the hourly line and in the history.
 */
export function measuredStep(quantity: Quantity, setpoint: number): number {
  if (quantity === 'temperature') return 1;
  if (quantity === 'humidity') return 3;
  return Math.max(1, Math.abs(setpoint) * 0.05);
}

/**
 * Why `status` is worth a status line now, given the last line written for its loop: the
 * first line, a changed mode or setpoint, a changed action or condition (a wiggling one once it
 * held SETTLE_MS; `actionSinceMs` is when the loop's current action was first seen), a sensor
 * of a set dropped or back, a reading lost or back, or the measured value's distance from the setpoint moved by measuredStep; undefined when nothing changed
 * meaningfully (the hourly line still comes).
 */
export function statusLineChange(
  last: WrittenStatusLine | undefined,
  status: LoopStatus,
  nowMs: number,
  actionSinceMs: number = nowMs,
): string | undefined {
  if (!last) return 'first';
  if (status.mode !== last.mode) return 'mode';
  if (status.setpoint !== last.setpoint) return 'setpoint';
  if (status.action !== last.action && nowMs - actionSinceMs >= SETTLE_MS) return 'action';
  for (const condition of status.conditions) {
    const flag = isProblem(condition) ? flagText(condition) : 'ok';
    if (flag === (last.flags.get(condition.type) ?? 'ok')) continue;
    const settled = nowMs - condition.lastTransitionMs >= SETTLE_MS;
    if (!WIGGLING_CONDITIONS.has(condition.type) || settled) return condition.type;
  }
  if (droppedSensors(status) !== last.droppedSensors) return 'sensors';
  if ((status.measured === undefined) !== (last.measured === undefined)) return 'measured';
  if (status.measured !== undefined && last.measured !== undefined) {
    // The distance from the setpoint, not the value: a loop swinging ±0.5 °C around its setpoint
    // is steady; one warming up towards it, or drifting away, moves.
    const moved = Math.abs(
      Math.abs(status.measured - status.setpoint) - Math.abs(last.measured - last.setpoint),
    );
    if (moved >= measuredStep(status.quantity, status.setpoint)) return 'measured';
  }
  return undefined;
}
