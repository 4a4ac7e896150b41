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
      .describe('Stable id of this homeostat instance; part of every MQTT topic. Required.'),
    name: z.string().min(1).optional().describe('Human-readable name (Home Assistant device). Default: id.'),
  })
  .describe('Who this homeostat is.');
