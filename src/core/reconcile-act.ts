/**
 * reconcile's last steps (reconcile.ts): what to write to each actuator, which directions were
 * active (the changeover delay), and the next wake-up.
 */
import { retryDueOnReturn } from './actuator-availability.js';
import { type ActuatorCommand, type CommandMemory, decideCommand } from './command.js';
import { type LoopSpec, loopActuators } from './loop-spec.js';
import type { LoopMemory, LoopObserved } from './loop-state.js';
import { isOn } from './numbers.js';
import type { Cycle } from './reconcile-safety.js';

/**
 * Each direction active until now, for the changeover delay: on now, or on until this cycle (an
 * actuator holds its level between cycles), so the delay counts from when it goes idle, not
 * from when it was last seen on.
 */
export function markActive(
  spec: LoopSpec,
  before: LoopMemory,
  cycle: Cycle,
  nowMs: number,
): LoopMemory['lastActiveMs'] {
  let lastActiveMs = cycle.memory.lastActiveMs;
  for (const { direction, actuator } of loopActuators(spec)) {
    if (isOn(cycle.levels[actuator.id]) || isOn(before.commands[actuator.id]?.level)) {
      lastActiveMs = { ...lastActiveMs, [direction]: nowMs };
    }
  }
  return lastActiveMs;
}

/** Step 5: what to write to each actuator (only where observed differs, or a retry is due). */
export function commandLevels(
  spec: LoopSpec,
  observed: LoopObserved,
  before: LoopMemory,
  cycle: Cycle,
  nowMs: number,
): {
  commands: ActuatorCommand[];
  memory: Record<string, CommandMemory>;
  allConfirmed: boolean;
  wakeTimes: number[];
} {
  const commands: ActuatorCommand[] = [];
  const memory = { ...before.commands };
  const wakeTimes: number[] = [];
  let allConfirmed = true;
  for (const { actuator } of loopActuators(spec)) {
    const id = actuator.id;
    const decision = decideCommand(
      id,
      cycle.levels[id]!,
      observed.actuators[id],
      retryDueOnReturn(before.commands[id], observed.availability?.[id], spec),
      nowMs,
      spec,
      cycle.why[id]!,
    );
    memory[id] = decision.memory;
    if (decision.command) commands.push(decision.command);
    if (!decision.confirmed) allConfirmed = false;
    wakeTimes.push(decision.nextWakeMs);
  }
  return { commands, memory, allConfirmed, wakeTimes };
}

/** The earliest wake time not before now, or a keep-alive from now when there is none. */
export function nextWakeMs(wakeTimes: (number | undefined)[], nowMs: number, keepAliveMs: number): number {
  const future = wakeTimes.filter((t): t is number => Number.isFinite(t));
  // Rounded up to whole ms so a wake-up is never a hair before the moment it waits for.
  return Math.ceil(future.length > 0 ? Math.max(nowMs, Math.min(...future)) : nowMs + keepAliveMs);
}
