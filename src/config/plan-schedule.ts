/**
 * `homeostat plan`'s lines for loops with presets, a weekly schedule or profiles:
 * the setpoint in force now, where it comes from, and the next changes in the node's local
 * time. Informational, like planTunings: not changes of the file.
 */
import { effectiveDesired, hasSchedule, type ScheduleRow } from '../core/schedule/effective-desired.js';
import { nodeTimeZone } from './schema/schedule.js';
import type { Config } from './schema.js';

/** `ms` as local wall time in `timeZone`: 'Tue 2026-12-01 06:30'. */
export function localTimeText(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(ms))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/**
 * One block per loop of `next` with presets, a schedule or profiles: the effective setpoint at
 * `nowMs` from the stored desired state (`rows`; a loop not stored yet: the file's values).
 */
export function planSchedules(
  next: Config,
  rows: readonly (ScheduleRow & { loop: string })[],
  nowMs: number,
): string[] {
  const timeZone = nodeTimeZone(next);
  const stored = new Map(rows.map((row) => [row.loop, row]));
  const lines: string[] = [];
  for (const id of Object.keys(next.loops).sort()) {
    const loop = next.loops[id]!;
    if (!hasSchedule(loop)) continue;
    const row = stored.get(id) ?? { setpoint: loop.setpoint, mode: loop.mode };
    const { setpoint, mode, schedule, effective } = effectiveDesired(row, loop, timeZone, nowMs);
    if (schedule === undefined) continue;
    const unit = loop.unit ? ` ${loop.unit}` : '';
    const from = [
      schedule.source,
      schedule.preset === null ? undefined : `preset ${schedule.preset}`,
      schedule.profile === undefined
        ? undefined
        : `profile ${schedule.profile.name} ${schedule.profile.state}, step ${schedule.profile.stepIndex + 1}/${schedule.profile.stepCount}`,
      schedule.heldUntil === undefined
        ? undefined
        : `held until ${localTimeText(Date.parse(schedule.heldUntil), timeZone)}`,
    ].filter((part) => part !== undefined);
    lines.push(
      `schedule ${id}: ${round(setpoint)}${unit} ${mode} now, from ${from.join(', ')} (${timeZone})`,
    );
    schedule.next.forEach((change, index) => {
      const modeText = change.mode === undefined || change.mode === mode ? '' : ` ${change.mode}`;
      // A ramp starts there and arrives at its setpoint at the next change.
      const ramp = effective?.next[index]?.stepKind === 'ramp' ? 'ramp to ' : '';
      lines.push(
        `  next ${localTimeText(Date.parse(change.at), timeZone)} → ${ramp}${round(change.setpoint)}${unit}${modeText} (${change.source})`,
      );
    });
    if (schedule.next.length === 0) lines.push('  no change due');
  }
  return lines;
}

/** A ramp's setpoint now may have many decimals: 2 are enough to read. */
function round(value: number): number {
  return Math.round(value * 100) / 100;
}
