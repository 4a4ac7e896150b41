import { z } from 'zod';
import { NODE_ID_PATTERN } from './common.js';

/** Who this homeostat is: its id appears in every MQTT topic. */
export const nodeSchema = z
  .strictObject({
    id: z
      .string()
      .regex(NODE_ID_PATTERN, {
        error: (iss) => `use only lowercase letters, digits, _ and - (got ${JSON.stringify(iss.input)})`,
      })
      .describe(
        'Stable id of this homeostat instance: lowercase letters, digits, _ and -. Part of every MQTT ' +
          'topic and Home Assistant unique id, so changing it makes a new device. Required.',
      ),
    name: z
      .string()
      .min(1)
      .optional()
      .describe('Human-readable name (Home Assistant device, dashboard). Default: the id.'),
  })
  .describe('Who this homeostat is.');
