import type { LoopStatus } from './core/status.js';

/**
 * One readable line per loop for logs and terminals:
 * `room  20.06 °C → 20 °C  heat  output 43 %  heating  [Converged]`
 */
export function formatStatusLine(status: LoopStatus, unit: string): string {
  const measured = status.measured === undefined ? '—' : `${status.measured.toFixed(2)} ${unit}`;
  const output = `${Math.round(status.output * 100)} %`;
  const problems = status.conditions
    // Faulted and Interlocked report trouble when True; the others when not True.
    .filter((c) =>
      c.type === 'Faulted' || c.type === 'Interlocked' ? c.status === 'True' : c.status !== 'True',
    )
    .map((c) => `${c.type}=${c.status}(${c.reason})`);
  const flags = problems.length > 0 ? problems.join(' ') : 'ok';
  return `${status.loop}  ${measured} → ${status.setpoint} ${unit}  ${status.mode}  output ${output}  ${status.action}  [${flags}]`;
}
