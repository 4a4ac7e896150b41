/**
 * The idempotence property every loop shape must have, as one check the reconcile tests run for
 * each shape: a cycle whose wanted levels were applied is news to nobody the next time.
 */
import assert from 'node:assert/strict';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { initialLoopMemory, type LoopMemory, reconcile } from '../../src/core/reconcile.js';
import type { Mode } from '../../src/core/types.js';
import { at, desired, min, observed, reading, s } from './fixtures.js';

/** What the controller and the relays remember, without the command bookkeeping. */
export function controllerState(memory: LoopMemory): Omit<LoopMemory, 'commands' | 'conditions'> {
  const { commands: _commands, conditions: _conditions, ...rest } = memory;
  return rest;
}

/** The ids of the loop's actuators (raise, then lower). */
export function actuatorIds(spec: LoopSpec): string[] {
  return [spec.raise?.id, spec.lower?.id].filter((id): id is string => id !== undefined);
}

/**
 * Given a first cycle of `spec` (mode, setpoint, one reading of `value` at 1 min) whose wanted
 * levels are then applied: reconciling again at the same time sends nothing and wants the same,
 * the controller remembers the same (only the commands are now confirmed), a third time is a
 * fixed point, and a cycle 5 s later without a new reading is no news either.
 */
export function assertIdempotentOnceApplied(
  spec: LoopSpec,
  mode: Mode,
  setpoint: number,
  value: number,
): void {
  const now = at(min(1));
  const r = reading(value, now);
  const off = Object.fromEntries(actuatorIds(spec).map((id) => [id, 0]));
  // Given a first cycle whose wanted levels are then applied …
  const first = reconcile(spec, desired(mode, setpoint), observed(r, off), initialLoopMemory(), now);
  const applied = { ...off, ...first.wanted };
  // … when the loop is reconciled again with the same time and reading, nothing is sent …
  const second = reconcile(spec, desired(mode, setpoint), observed(r, applied), first.memory, now);
  assert.deepEqual(second.commands, []);
  assert.deepEqual(second.wanted, first.wanted);
  // … the controller remembers the same (only the commands are now confirmed) …
  assert.deepEqual(controllerState(second.memory), controllerState(first.memory));
  assert.ok(Object.values(second.memory.commands).every((c) => c.confirmed));
  // … and a third time is a fixed point: deep-equal memory, same wake-up.
  const third = reconcile(spec, desired(mode, setpoint), observed(r, applied), second.memory, now);
  assert.deepEqual(third.commands, []);
  assert.deepEqual(third.memory, second.memory);
  assert.equal(third.nextWakeMs, second.nextWakeMs);
  // A cycle a few seconds later without a new reading is no news either.
  const later = reconcile(spec, desired(mode, setpoint), observed(r, applied), third.memory, now + s(5));
  assert.deepEqual(later.commands, []);
  assert.deepEqual(later.wanted, first.wanted);
}
