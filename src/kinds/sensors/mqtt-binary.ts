/**
 * `mqtt_binary`: an on/off input a device publishes over MQTT (a window or door contact, a
 * motion or leak sensor), read as 1 (open, occupied, wet, the input on) or 0 — as a gpio_input
 * reads 1 for an open window, so an interlock's `pauseWhen: 1` reads the same for both.
 */
import { z } from 'zod';
import { BINARY_PRESET_NAMES } from '../../drivers/mqtt/binary-payload.js';
import { MqttBinarySensor } from '../../drivers/mqtt/binary-sensor.js';
import { fieldPath, plainTopic } from '../fields.js';
import { sensorKind } from '../types.js';
import {
  CONTACT_MAX_QUIET_S,
  CONTACT_STALE_AFTER_S,
  checkMqttBinary,
  type MqttBinaryConfig,
  resolveMqttBinary,
} from './mqtt-binary-rules.js';
import { livenessSchema } from './mqtt-liveness.js';

const binaryWord = z.union([z.boolean(), z.string().min(1), z.number()]);

/** The liveness block with a contact's default bound: contacts report only on change. */
const contactLiveness = livenessSchema
  .safeExtend({
    maxQuietS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'How long the last state stays in force while the device is seen alive (within staleAfterS), seconds; ' +
          'then the interlock trips as at staleAfterS. Default ' +
          `${CONTACT_MAX_QUIET_S} (25 h: Zigbee2MQTT's own passive availability timeout for battery devices, ` +
          'past which it calls the device offline; a contact reports only on change and a window stays shut for days).',
      ),
  })
  .optional()
  .describe(
    'How the device shows it is alive apart from its state, for a contact that reports only on change. While it is seen alive the ' +
      'last state stays in force up to maxQuietS; offline trips an interlock at once. Default: with preset, ' +
      "that family's availability topic for device (Zigbee2MQTT: enable availability there); else none, the " +
      'state goes stale at staleAfterS.',
  );

const schema = z
  .strictObject({
    kind: z.literal('mqtt_binary').describe('Sensor kind: decides which other keys apply. Required.'),
    preset: z
      .enum(BINARY_PRESET_NAMES)
      .optional()
      .describe(
        'Topics and words of a device family, with device and input: zigbee2mqtt (field <input> of <device>; ' +
          'contact false = open reads 1, other properties true reads 1), tasmota (Switch<input> ON/OFF in ' +
          'stat/<device>/RESULT and tele/<device>/SENSOR), shelly (state of <device>/status/input:<input>, true ' +
          'reads 1), esphome (<device>/binary_sensor/<input>/state ON/OFF). Default: none, give topic.',
      ),
    device: plainTopic
      .optional()
      .describe(
        "With preset: zigbee2mqtt, the device's topic with the base (zigbee2mqtt/living_window); tasmota, its " +
          'Topic; shelly and esphome, its topic prefix. Default: none; required with preset.',
      ),
    input: z
      .union([z.string().min(1), z.number().int().min(0)])
      .optional()
      .describe(
        'With preset, which input: zigbee2mqtt the property (contact, occupancy, water_leak; default contact), ' +
          'tasmota the switch number (default 1), shelly the input id (default 0), esphome the binary ' +
          "sensor's object id (required). Default: as listed.",
      ),
    topic: plainTopic
      .optional()
      .describe(
        'The topic the state is published on (no wildcards); required without preset. Default: from the preset.',
      ),
    field: fieldPath
      .optional()
      .describe(
        'Without preset: dot path of the state in a JSON payload (contact). Messages without it are ignored. ' +
          'Default: none, the payload is the state.',
      ),
    on: z
      .array(binaryWord)
      .min(1)
      .optional()
      .describe(
        'Words that read 1 (open, occupied, wet), compared ignoring case; JSON true matches true. Default: from ' +
          'the preset, else [true, ON, open, 1]. Give off with it.',
      ),
    off: z
      .array(binaryWord)
      .min(1)
      .optional()
      .describe(
        'Words that read 0. Default: from the preset, else [false, OFF, closed, 0]. Give on with it.',
      ),
    invert: z
      .boolean()
      .default(false)
      .describe(
        'Swap on and off (a reed on a Shelly or Tasmota input that closes when the window does). Default false.',
      ),
    liveness: contactLiveness,
    periodS: z
      .number()
      .gt(0)
      .default(60)
      .describe(
        'Seconds between two samplings of the latest state; a new state is read at once anyway. Default 60.',
      ),
    staleAfterS: z
      .number()
      .gt(0)
      .default(CONTACT_STALE_AFTER_S)
      .describe(
        'Seconds after which the latest state counts as missing (an interlock trips), unless its device is seen ' +
          `alive (liveness). Default ${CONTACT_STALE_AFTER_S} (an Aqara contact checks in about hourly and ` +
          'Zigbee2MQTT republishes its state each time).',
      ),
  })
  .describe(
    'An on/off input a device publishes over MQTT (window or door contact, motion, leak), read as 1 (open, ' +
      'occupied, wet) or 0 like gpio_input; needs the mqtt block. A payload that is none of the words, or the ' +
      'device offline, reads NaN: an interlock on it trips, and says why.',
  )
  .superRefine(checkMqttBinary);

export const mqttBinarySensor = sensorKind<typeof schema, MqttBinaryConfig>({
  kind: 'mqtt_binary',
  schema,
  simulated: false,
  usesMqtt: true,
  resolve: resolveMqttBinary,
  // What the topics, words and liveness are resolved from (the resolved ones are not schema fields).
  driverFields: ['preset', 'device', 'input', 'topic', 'field', 'on', 'off', 'invert', 'liveness'],
  createDriver: (sensor, ctx) =>
    new MqttBinarySensor({
      id: ctx.id,
      transport: ctx.transport(),
      sources: sensor.sources,
      on: sensor.onWords,
      off: sensor.offWords,
      liveness: sensor.livenessOptions,
      nowMs: ctx.nowMs,
      monotonicMs: ctx.monotonicMs,
    }),
});
