import { z } from 'zod';
import { validateTimeZone } from '../../core/schedule/validate.js';
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
    timeZone: z
      .string()
      .refine((zone) => validateTimeZone(zone, 'timeZone').length === 0, {
        error: (iss) =>
          `unknown time zone ${JSON.stringify(iss.input)} (an IANA name such as Europe/Berlin, or UTC)`,
      })
      .optional()
      .describe(
        'IANA time zone of the weekly schedules (e.g. Europe/Berlin); daylight saving is followed. ' +
          "Default: the system's time zone (UTC if it has none).",
      ),
  })
  .describe('Who this homeostat is.');
