/**
 * The stuck watch's config part (core/monitors/stuck-watch.ts): `loops.<id>.stuckWatch`, its
 * period in seconds and its distance, which defaults per quantity (none for a generic loop).
 */

import { z } from 'zod';
import type { Quantity } from '../../core/types.js';
import type { LoopMonitorConfig } from './types.js';
import { checkDistance, distanceField, distanceOrDefault, periodField } from './watch-fields.js';

/** The default distance per quantity (loop unit); a generic loop must give its own. */
export const STUCK_MIN_CHANGE: Partial<Record<Quantity, number>> = { temperature: 2, humidity: 10 };

const schema = z
  .strictObject({
    periodS: periodField(
      'How long an actuator must have been commanded off before the value moving its way counts, ' +
        "seconds; longer than the relay's window and the overshoot after switching off. Default 1800.",
    ),
    minChange: distanceField(
      'How far (loop unit) the value must move its way from its extreme since off, and be past ' +
        'the setpoint, to latch. Default 2 (°C, temperature), 10 (%RH, humidity); required for generic.',
    ),
  })
  .optional()
  .describe(
    'Welded relay or stuck plug: latch a fault when the value keeps rising (falling) with the heater ' +
      '(cooler) commanded off for periodS, by minChange from its lowest (highest) since and minChange ' +
      'past the setpoint. Off by default because plants drift on their own (a room in the sun, a ' +
      'fermenting beer warms itself): enable it where nothing but the actuator moves the value (a ' +
      'kettle, a tank, a heated box in a cool room). Default: off.',
  );

export const stuckWatchConfig = {
  scope: 'loop',
  key: 'stuckWatch',
  schema,
  check: (watch, loop, issue) => checkDistance(watch.minChange, 'minChange', loop, issue),
  spec: (watch, quantity) => ({
    periodMs: watch.periodS * 1000,
    minChange: distanceOrDefault(watch.minChange, STUCK_MIN_CHANGE, quantity),
  }),
} satisfies LoopMonitorConfig<'stuckWatch', typeof schema>;
