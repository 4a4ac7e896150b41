import { z } from 'zod';
import { MqttSensor } from '../../drivers/mqtt/sensor.js';
import { fieldPath, plainTopic, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';
import { DEFAULT_MAX_QUIET_S, livenessOptions, livenessSchema } from './mqtt-liveness.js';

const schema = z
  .strictObject({
    kind: z.literal('mqtt').describe('Sensor kind: decides which other keys apply. Required.'),
    topic: plainTopic.describe(
      'Topic the device publishes its reading on, e.g. tele/th1/SENSOR (Tasmota), zigbee2mqtt/bedroom ' +
        '(Zigbee2MQTT), shellies/ht-1/sensor/temperature (Shelly). No wildcards. Required.',
    ),
    field: fieldPath
      .optional()
      .describe(
        'Dot path of the value in a JSON payload: AM2301.Temperature (Tasmota), temperature ' +
          '(Zigbee2MQTT), tC (Shelly Plus). Messages without it are ignored. Default: none, the ' +
          'payload is a plain number.',
      ),
    periodS: z
      .number()
      .gt(0)
      .default(60)
      .describe(
        'How often the device publishes, seconds; the latest value is also sampled this often. Default 60.',
      ),
    staleAfterS: sensorCommon.staleAfterS,
    liveness: livenessSchema.optional(),
  })
  .describe(
    'A value a device publishes on MQTT (Tasmota, Zigbee2MQTT, Shelly, ESPHome); needs the mqtt block. ' +
      'A value that is not a number (nan, inf, null, text) sends the loop safe at once; a message ' +
      'without the configured field is ignored.',
  )
  .superRefine((sensor, ctx) => {
    // The value only changes when the device publishes: it would go stale between messages.
    if (sensor.staleAfterS !== undefined && sensor.staleAfterS <= sensor.periodS) {
      ctx.addIssue({
        code: 'custom',
        path: ['staleAfterS'],
        message: `must be greater than periodS (${sensor.periodS}): the device publishes that often`,
      });
    }
    // A quiet value is kept past staleAfterS only: a bound at or below it would never apply.
    const staleAfterS = sensor.staleAfterS ?? 3 * sensor.periodS;
    const maxQuietS = sensor.liveness?.maxQuietS ?? DEFAULT_MAX_QUIET_S;
    if (sensor.liveness !== undefined && !(maxQuietS > staleAfterS)) {
      ctx.addIssue({
        code: 'custom',
        path: ['liveness', 'maxQuietS'],
        message:
          `must be greater than staleAfterS (${staleAfterS} s): a quiet value is kept in force ` +
          `past staleAfterS up to maxQuietS (${maxQuietS} s)`,
      });
    }
  });

export const mqttSensor = sensorKind({
  kind: 'mqtt',
  schema,
  simulated: false,
  usesMqtt: true,
  // The driver checks staleness itself (it keeps a pushed value): staleAfterS is the driver's.
  driverFields: ['topic', 'field', 'staleAfterS', 'liveness'],
  createDriver: (sensor, ctx) =>
    new MqttSensor({
      id: ctx.id,
      transport: ctx.transport(),
      topic: sensor.topic,
      field: sensor.field,
      staleAfterMs: sensor.staleAfterS * 1000,
      nowMs: ctx.nowMs,
      monotonicMs: ctx.monotonicMs,
      liveness: sensor.liveness === undefined ? undefined : livenessOptions(sensor.liveness),
    }),
});
