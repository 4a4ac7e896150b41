import type { CompletedCycle } from '../runtime/loop-reconciler.js';
import type { DaemonStore } from './store.js';

/**
 * Persists what a cycle did: latest memory and status, a history sample per new reading, and
 * an event per actuator command (other than keep-alives), per fault raised or cleared and per
 * autotune started, refused, done or aborted.
 * All buffered: written at the next flush.
 */
export class CycleRecorder {
  private readonly lastSampleAtMs = new Map<string, number>();
  private readonly lastFaulted = new Map<string, string>();
  private readonly lastLevel = new Map<string, number>();

  constructor(private readonly store: DaemonStore) {}

  record(cycle: CompletedCycle): void {
    const { loop, nowMs, reading, status } = cycle;
    const { state } = this.store;
    state.saveState(loop, cycle.memory, status, nowMs);
    if (reading && this.lastSampleAtMs.get(loop) !== reading.atMs) {
      this.lastSampleAtMs.set(loop, reading.atMs);
      state.addSample(loop, {
        atMs: reading.atMs,
        setpoint: status.setpoint,
        measured: status.measured,
        output: status.output,
        action: status.action,
      });
    }
    this.recordCommands(cycle);
    this.recordFaultChange(cycle);
    this.recordAutotune(cycle);
  }

  /** An autotune started, refused, done or aborted (with its reason): one event each. */
  private recordAutotune({ loop, nowMs, events }: CompletedCycle): void {
    for (const event of events ?? []) {
      this.store.state.addEvent({
        atMs: nowMs,
        loop,
        kind: event.kind,
        message: event.message,
        ...(event.data === undefined ? {} : { data: event.data }),
      });
    }
  }

  private recordCommands({ loop, nowMs, commands }: CompletedCycle): void {
    for (const command of commands) {
      // Switches, drift and safe states, not every move of a continuous level nor keep-alives:
      // each event costs SD-card writes.
      const worthAnEvent =
        command.reason === 'drift' ||
        command.reason === 'safe-state' ||
        (command.reason !== 'keep-alive' && isSwitch(command.level, this.lastLevel.get(command.actuatorId)));
      if (!worthAnEvent) {
        this.lastLevel.set(command.actuatorId, command.level);
        continue;
      }
      this.lastLevel.set(command.actuatorId, command.level);
      this.store.state.addEvent({
        atMs: nowMs,
        loop,
        kind: 'actuator',
        source: command.reason,
        message: `${command.actuatorId} → ${command.level} (${command.reason}: ${command.detail})`,
      });
    }
  }

  private recordFaultChange({ loop, nowMs, status }: CompletedCycle): void {
    const faulted = status.conditions.find((c) => c.type === 'Faulted');
    if (!faulted) return;
    const key = `${faulted.status}:${faulted.reason}`;
    const before = this.lastFaulted.get(loop);
    if (before !== undefined && before !== key) {
      this.store.state.addEvent({
        atMs: nowMs,
        loop,
        kind: faulted.status === 'True' ? 'fault-raised' : 'fault-cleared',
        message: faulted.status === 'True' ? `${faulted.reason}: ${faulted.message}` : 'fault cleared',
      });
    }
    this.lastFaulted.set(loop, key);
  }
}

/** A command worth an event: on ↔ off (0 ↔ above 0), or the first one seen. */
function isSwitch(level: number, before: number | undefined): boolean {
  return before === undefined || before > 0 !== level > 0;
}
