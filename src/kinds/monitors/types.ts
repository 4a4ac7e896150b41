/**
 * A safety monitor's config part: its keys' schema with defaults and descriptions (the
 * descriptions are its entry in the generated configuration reference), its checks and its
 * conversion to the core's spec. The pure part (check, fault text, memory) is core/monitors/,
 * under the same name; registry.ts lists one config part per core monitor, so a core monitor
 * without one fails the type-check. Here, not in config/, because actuator kinds use the
 * actuator monitors' fields (kinds import core and zod, never config).
 */
import type { z } from 'zod';
import type { ActuatorSpec, LoopSpec } from '../../core/loop-spec.js';
import type { Quantity } from '../../core/types.js';

/** What a loop monitor's checks may read of its loop, besides its own block. */
export interface MonitorLoop {
  quantity: Quantity;
  raise?: string | undefined;
  lower?: string | undefined;
  limits: { min: number; max: number };
  /** The loop's plausible range, given or defaulted. */
  plausible: { min: number; max: number };
}

/** Reports a problem at a path within the monitor's block. */
export type MonitorIssue = (path: (string | number)[], message: string) => void;

/** A monitor configured per loop, by one optional block of the loop (`cutoff: {…}`). */
export interface LoopMonitorConfig<Key extends keyof LoopSpec, Schema extends z.ZodType> {
  scope: 'loop';
  /** The loop's key, in the file and in LoopSpec. */
  key: Key;
  /** The block, optional: absent is off. */
  schema: Schema;
  /** Its rules beyond the schema, on the parsed block. */
  check(block: NonNullable<z.output<Schema>>, loop: MonitorLoop, issue: MonitorIssue): void;
  /** The core's spec from the parsed block. */
  spec(block: NonNullable<z.output<Schema>>, quantity: Quantity): NonNullable<LoopSpec[Key]>;
}

/** A monitor configured per actuator, by one optional field of its section (`maxOnS`). */
export interface ActuatorMonitorConfig<Key extends string, Schema extends z.ZodType> {
  scope: 'actuator';
  /** The actuator's key in the file. */
  key: Key;
  /** The field, optional: absent is no limit. */
  schema: Schema;
  /** Its part of the core's ActuatorSpec from the field's value. */
  spec(value: NonNullable<z.output<Schema>>): Partial<ActuatorSpec>;
}
