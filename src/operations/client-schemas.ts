import { z } from 'zod';

/**
 * The autotune and tuning answers (their shapes: schemas.ts). Declared here,
 * loosely (unknown fields kept, most optional): the CLI prints what the daemon gives and must
 * not refuse a daemon one field newer than itself.
 */
const finiteOrNull = z.number().nullable().optional();
const fopdtFields = {
  gain: z.number(),
  timeConstantS: z.number(),
  deadTimeS: z.number(),
  ambient: z.number().optional(),
};
/** Standard errors: NaN (unknown) travels as null in JSON. */
const standardErrorView = z.object({
  gain: finiteOrNull,
  timeConstantS: finiteOrNull,
  deadTimeS: finiteOrNull,
});
export const gainsView = z.looseObject({ kp: z.number(), tiS: z.number(), tdS: z.number() });
export const tuningModelView = z.looseObject({
  ...fopdtFields,
  standardError: standardErrorView.optional(),
  rmsResidual: finiteOrNull,
});
/** A finished run's result as the loop's status shows it: the model and the gains, flat. */
export const autotuneResultView = z.looseObject({
  ...fopdtFields,
  standardError: standardErrorView.optional(),
  rmsResidual: finiteOrNull,
  kp: z.number(),
  tiS: z.number(),
  tdS: z.number(),
  closedLoopS: finiteOrNull,
  /** The suggested relay duty band, loop unit; or a time-proportioning window, s. */
  band: finiteOrNull,
  windowS: finiteOrNull,
});
export const autotuneView = z.looseObject({
  phase: z.string(),
  side: z.string().optional(),
  cycles: z.number().optional(),
  cyclesNeeded: z.number().optional(),
  elapsedMs: finiteOrNull,
  elapsedS: finiteOrNull,
  remainingMs: finiteOrNull,
  remainingS: finiteOrNull,
  remainingIsLimit: z.boolean().optional(),
  startedAt: z.string().nullable().optional(),
  endedAt: z.string().nullable().optional(),
  abortReason: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
  result: autotuneResultView.nullable().optional(),
});
export type AutotuneView = z.infer<typeof autotuneView>;
/** GET /api/loops/{loop} as the autotune follows it: the Loop with `autotune` and `tuning`. */
export const loopTuningView = z.looseObject({
  loop: z.string(),
  quantity: z.string(),
  unit: z.string(),
  mode: z.string(),
  setpoint: z.number(),
  step: z.number().optional(),
  generation: z.number(),
  observedGeneration: z.number(),
  actuators: z.record(z.string(), z.unknown()),
  autotune: autotuneView.nullable().optional(),
  tuning: z
    .looseObject({
      active: z.union([z.number(), z.literal('config')]),
      latest: z.number().nullable().optional(),
      /** The last start the loop could not make (a latched fault, no reading…), and why. */
      refused: z.looseObject({ reason: z.string(), generation: z.number().optional() }).nullable().optional(),
    })
    .nullable()
    .optional(),
});
export type LoopTuningView = z.infer<typeof loopTuningView>;
export const storedTuningView = z.looseObject({
  version: z.number(),
  createdAt: z.string(),
  source: z.string(),
  active: z.boolean(),
  gains: gainsView,
  /** A loop with a heater and a cooler: the lower side's gains (absent: `gains` serve both). */
  lowerGains: gainsView.optional(),
  model: tuningModelView.nullable().optional(),
  details: z.unknown().optional(),
});
export type StoredTuningView = z.infer<typeof storedTuningView>;
export const tuningsResponse = z.looseObject({
  loop: z.string(),
  active: z.union([z.number(), z.literal('config')]),
  tunings: z.array(storedTuningView),
});
export type TuningsResponse = z.infer<typeof tuningsResponse>;
/** A write's answer (autotune, tuning): refusals are answers too (`accepted: false`). */
export const writeResult = z.looseObject({
  loop: z.string().optional(),
  accepted: z.boolean(),
  reason: z.string().optional(),
  generation: z.number().int().optional(),
  changed: z.boolean().optional(),
  requestId: z.string().optional(),
});
export type WriteResult = z.infer<typeof writeResult>;
