import type { LatchedFault } from './effect-watch.js';
import { type LoopMemory, resetLatchedFault } from './loop-state.js';

/**
 * A fault reset as desired state. A person's reset is stored (committed, with a generation)
 * with the clock time it was received; each loop applies it once, to its memory: a fault
 * latched at or before that time is cleared, one latched after it is a new fault and holds.
 *
 * Once, by generation, not by time alone: the memory records the generation of the reset it
 * applied (`faultResetGeneration`), so a fault latched after a reset is never taken for the one
 * reset — even when the wall clock was set back and its time is earlier than the reset's.
 * Memory is written in batches: after a crash the stored memory may predate the reset and still
 * hold the latch; it does not name that reset, so the first cycle applies it again. (A new latch
 * is written at once, with the generation of the reset before it.)
 */

/** The last reset stored for a loop: when it was received (clock ms) and its generation. */
export interface StoredFaultReset {
  atMs: number;
  generation: number;
}

/** What a loop's memory remembers of resets (kept in the memory blob with the rest). */
export interface FaultResetMark {
  /** Generation of the last stored reset this memory has applied; absent: none. */
  faultResetGeneration?: number;
}

/** `memory` with `reset` applied, once (see the module comment). Unchanged: the same object. */
export function applyStoredFaultReset<M extends LoopMemory & FaultResetMark>(
  memory: M,
  reset: StoredFaultReset | undefined,
): M {
  if (reset === undefined || memory.faultResetGeneration === reset.generation) return memory;
  if (!Number.isFinite(reset.atMs)) return memory;
  return { ...resetLatchedFault(memory, reset.atMs), faultResetGeneration: reset.generation } as M;
}

/** The latched fault a reset asked for at `requestedAtMs` would clear; undefined when none. */
export function resettableFault(memory: LoopMemory, requestedAtMs: number): LatchedFault | undefined {
  const latched = memory.latchedFault;
  return latched !== undefined && latched.atMs <= requestedAtMs ? latched : undefined;
}
