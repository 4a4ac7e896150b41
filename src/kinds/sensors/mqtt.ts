import { z } from 'zod';
import { MqttSensor } from '../../drivers/mqtt/sensor.js';
import { fieldPath, plainTopic, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';

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
  });

export const mqttSensor = sensorKind({
  kind: 'mqtt',
  schema,
  simulated: false,
  usesMqtt: true,
  // The driver checks staleness itself (it keeps a pushed value): staleAfterS is the driver's.
  driverFields: ['topic', 'field', 'staleAfterS'],
  createDriver: (sensor, ctx) =>
    new MqttSensor({
      id: ctx.id,
      transport: ctx.transport(),
      topic: sensor.topic,
      field: sensor.field,
      staleAfterMs: sensor.staleAfterS * 1000,
      nowMs: ctx.nowMs,
    }),
});
