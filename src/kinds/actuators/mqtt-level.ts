import { z } from 'zod';
import { MqttLevel } from '../../drivers/mqtt/actuator.js';
import { fieldPath, maxOnSchema, plainTopic, safeLevelSchema, stateStaleAfterS } from '../fields.js';
import { actuatorKind } from '../types.js';
import { asParsed, continuousOutput } from './shared.js';

const schema = z
  .strictObject({
    kind: z.literal('mqtt_level').describe('Actuator kind: decides which other keys apply. Required.'),
    commandTopic: plainTopic.describe(
      'Topic the level is published on (QoS 1, never retained), e.g. cmnd/dimmer/Dimmer. Required.',
    ),
    stateTopic: plainTopic.describe(
      'Topic the device reports its actual level on, e.g. stat/dimmer/RESULT. Required.',
    ),
    commandField: z
      .string()
      .min(1)
      .optional()
      .describe('Send JSON {"<commandField>": n} (e.g. brightness). Default: the plain number.'),
    stateField: fieldPath
      .optional()
      .describe(
        'Dot path of the level in a JSON state payload (Dimmer for Tasmota). Messages without it are ' +
          'ignored. Default: none, the payload is the number.',
      ),
    levelScale: z
      .number()
      .int()
      .min(1)
      .default(100)
      .describe(
        'Device units at full output: output 0..1 is sent as round(output × levelScale). 100 for ' +
          'percent (dimmers, valves, fans), 254 for Zigbee brightness, 255 for 8-bit PWM. Default 100.',
      ),
    stateStaleAfterS,
    safeLevel: safeLevelSchema,
    maxOnS: maxOnSchema,
  })
  .describe(
    'A continuous actuator behind MQTT (dimmer, valve, fan speed) taking a level and reporting it ' +
      'back; needs the mqtt block.',
  );

export const mqttLevel = actuatorKind({
  kind: 'mqtt_level',
  schema,
  ...continuousOutput,
  simulated: false,
  usesMqtt: true,
  resolve: asParsed,
  commandTopic: (level) => level.commandTopic,
  driverFields: [
    'commandTopic',
    'stateTopic',
    'commandField',
    'stateField',
    'levelScale',
    'stateStaleAfterS',
  ],
  createDriver: (level, ctx) =>
    new MqttLevel({
      id: ctx.id,
      transport: ctx.transport(),
      commandTopic: level.commandTopic,
      stateTopic: level.stateTopic,
      commandField: level.commandField,
      stateField: level.stateField,
      levelScale: level.levelScale,
      stateStaleAfterMs: level.stateStaleAfterS * 1000,
      nowMs: ctx.nowMs,
      logger: ctx.logger,
    }),
});
