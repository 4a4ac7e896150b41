/**
 * The start cap's config part (core/monitors/start-cap.ts): `maxStartsPerHour` of the relay
 * kinds (relayFields). It needs a safe state of off (config/schema/references.ts checks it for
 * every actuator monitor).
 */
import { z } from 'zod';
import type { ActuatorMonitorConfig } from './types.js';

const schema = z
  .number()
  .int()
  .gt(0)
  .optional()
  .describe(
    'Most switch-ons in any hour (compressor and relay wear; 6 suits most compressors): a further ' +
      'start waits until the oldest is an hour old; switching off is always allowed. Needs safeState ' +
      'off. Default: no cap.',
  );

export const startCapConfig = {
  scope: 'actuator',
  key: 'maxStartsPerHour',
  schema,
  spec: (maxStartsPerHour) => ({ maxStartsPerHour }),
} satisfies ActuatorMonitorConfig<'maxStartsPerHour', typeof schema>;
