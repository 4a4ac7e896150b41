/**
 * The maximum on-time's config part (core/monitors/max-on-time.ts): `maxOnS` of every actuator
 * kind, in seconds. It needs a safe state of off (config/schema/references.ts checks it for
 * every actuator monitor).
 */
import { z } from 'zod';
import type { ActuatorMonitorConfig } from './types.js';

const schema = z
  .number()
  .gt(0)
  .optional()
  .describe(
    'Longest time continuously on (above 0), seconds: reaching it switches every actuator of the ' +
      'loop safe and latches a fault until reset (a pump running dry, a leak, a door left open). Set ' +
      'it above the longest run the plant ever needs. Needs a safe state of off (0). Default: no limit.',
  );

export const maxOnTimeConfig = {
  scope: 'actuator',
  key: 'maxOnS',
  schema,
  spec: (maxOnS) => ({ maxOnMs: maxOnS * 1000 }),
} satisfies ActuatorMonitorConfig<'maxOnS', typeof schema>;
