/**
 * The runaway watch's config part (core/monitors/runaway-watch.ts): `loops.<id>.runawayWatch`,
 * its band, which defaults per quantity (none for a generic loop), and its period in seconds.
 */

import { z } from 'zod';
import type { Quantity } from '../../core/types.js';
import type { LoopMonitorConfig } from './types.js';
import { checkDistance, distanceField, distanceOrDefault, periodField } from './watch-fields.js';

/** The default band per quantity (loop unit); a generic loop must give its own. */
export const RUNAWAY_BAND: Partial<Record<Quantity, number>> = { temperature: 2, humidity: 10 };

const schema = z
  .strictObject({
    band: distanceField(
      'Distance from the setpoint (loop unit) that counts as lost control once converged. ' +
        'Default 2 (°C, temperature), 10 (%RH, humidity); required for generic.',
    ),
    periodS: periodField(
      'How long the value may stay outside the band at full output, seconds; longer than the ' +
        'plant takes to recover from a door opened. Default 1800.',
    ),
  })
  .optional()
  .describe(
    "Thermal runaway (Marlin's, once stable; Klipper's verify_heater): after the loop converged " +
      'at its setpoint, the value stays more than band away for periodS while the output is ' +
      'saturated towards it (a probe out of the tank, a heater lost): latch a fault. Re-armed at ' +
      'each new setpoint once converged. Off by default: an undersized heater in a hard frost does ' +
      'the same, and latching it off would be worse. Default: off.',
  );

export const runawayWatchConfig = {
  scope: 'loop',
  key: 'runawayWatch',
  schema,
  check: (watch, loop, issue) => checkDistance(watch.band, 'band', loop, issue),
  spec: (watch, quantity) => ({
    band: distanceOrDefault(watch.band, RUNAWAY_BAND, quantity),
    periodMs: watch.periodS * 1000,
  }),
} satisfies LoopMonitorConfig<'runawayWatch', typeof schema>;
