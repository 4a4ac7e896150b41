import { z } from 'zod';
import { MqttLevel } from '../../drivers/mqtt/actuator.js';
import { availabilityTopic } from '../../drivers/mqtt/availability.js';
import { levelCommandPayload } from '../../drivers/mqtt/payload.js';
import { LEVEL_PRESET_NAMES, levelPreset } from '../../drivers/mqtt/switch-presets.js';
import { fieldPath, maxOnSchema, plainTopic, safeLevelSchema, stateStaleAfterS } from '../fields.js';
import { actuatorKind } from '../types.js';
import { continuousOutput, NO_DEAD_MAN } from './shared.js';

const schema = z
  .strictObject({
    kind: z.literal('mqtt_level').describe('Actuator kind: decides which other keys apply. Required.'),
    preset: z
      .enum(LEVEL_PRESET_NAMES)
      .optional()
      .describe(
        'Topics of a device family, with device and entity: esphome (a number component: ' +
          '<device>/number/<entity>/command takes the plain number, <device>/number/<entity>/state ' +
          'reports it; give the number min_value 0 and max_value levelScale). Topics given here ' +
          'override the preset. See docs/devices.md. Default: none, give both topics.',
      ),
    device: plainTopic
      .optional()
      .describe(
        "With preset esphome: the node's topic_prefix (its name by default). Default: none; required with preset.",
      ),
    entity: z
      .string()
      // ESPHome's object id keeps a-z, 0-9, _ and - (aioesphomeapi object_id.py)
      .regex(/^[a-z0-9_-]+$/, 'must be an ESPHome object id: lower-case letters, digits, _ and -')
      .optional()
      .describe(
        "With preset esphome: the number's object id (kettle_power). Default: none; required with preset.",
      ),
    commandTopic: plainTopic
      .optional()
      .describe(
        'Topic the level is published on (QoS 1, never retained), e.g. cmnd/dimmer/Dimmer. Default: ' +
          'from the preset; required without one.',
      ),
    stateTopic: plainTopic
      .optional()
      .describe(
        'Topic the device reports its actual level on, e.g. stat/dimmer/RESULT. Default: from the ' +
          'preset; required without one.',
      ),
    availabilityTopic: plainTopic
      .optional()
      .describe(
        'Where the device says it is online or offline: offline makes ActuatorConfirmed False ' +
          '("device offline") at once and the last level unknown; commands keep going. Default: from ' +
          'the preset (esphome <device>/status), else none.',
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
    'A continuous actuator behind MQTT (dimmer, valve, fan speed, an ESPHome number) taking a level ' +
      'and reporting it back; needs the mqtt block.',
  )
  .superRefine(checkLevel);

type RawLevel = z.output<typeof schema>;
/** An MQTT level with its preset applied: both topics resolved, and the availability topic if any. */
export type MqttLevelConfig = Omit<RawLevel, 'commandTopic' | 'stateTopic'> & {
  commandTopic: string;
  stateTopic: string;
};

/** The section's topics over its preset's. */
function levelTopics(raw: RawLevel): { commandTopic?: string; stateTopic?: string } {
  const preset =
    raw.preset !== undefined && raw.device !== undefined && raw.entity !== undefined
      ? levelPreset(raw.preset, raw.device, raw.entity)
      : {};
  return {
    ...preset,
    ...(raw.commandTopic === undefined ? {} : { commandTopic: raw.commandTopic }),
    ...(raw.stateTopic === undefined ? {} : { stateTopic: raw.stateTopic }),
  };
}

function checkLevel(raw: RawLevel, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (raw.preset !== undefined) {
    if (raw.device === undefined) issue('device', `required with preset ${raw.preset}`);
    if (raw.entity === undefined) issue('entity', `required with preset ${raw.preset}`);
    if (raw.device === undefined || raw.entity === undefined) return;
  } else {
    if (raw.device !== undefined)
      issue('preset', 'required with device (esphome), or give the topics instead');
    if (raw.entity !== undefined) issue('preset', 'required with entity (esphome)');
  }
  const topics = levelTopics(raw);
  if (topics.commandTopic === undefined) issue('commandTopic', 'required (or a preset, device and entity)');
  if (topics.stateTopic === undefined) issue('stateTopic', 'required (or a preset, device and entity)');
}

function resolveLevel(raw: RawLevel): MqttLevelConfig {
  // checkLevel guarantees both topics; the fallbacks only keep types honest.
  const topics = levelTopics(raw);
  const presetAvailability =
    raw.preset !== undefined && raw.device !== undefined
      ? availabilityTopic(raw.preset, raw.device)
      : undefined;
  const availability = raw.availabilityTopic ?? presetAvailability;
  return {
    ...raw,
    commandTopic: topics.commandTopic ?? '',
    stateTopic: topics.stateTopic ?? '',
    ...(availability === undefined ? {} : { availabilityTopic: availability }),
  };
}

export const mqttLevel = actuatorKind<typeof schema, MqttLevelConfig>({
  kind: 'mqtt_level',
  schema,
  ...continuousOutput,
  simulated: false,
  usesMqtt: true,
  resolve: resolveLevel,
  commandTopic: (raw) => levelTopics(raw).commandTopic,
  driverFields: [
    'preset',
    'device',
    'entity',
    'commandTopic',
    'stateTopic',
    'availabilityTopic',
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
      availabilityTopic: level.availabilityTopic,
      commandField: level.commandField,
      stateField: level.stateField,
      levelScale: level.levelScale,
      stateStaleAfterMs: level.stateStaleAfterS * 1000,
      nowMs: ctx.nowMs,
      monotonicMs: ctx.monotonicMs,
      logger: ctx.logger,
    }),
  // Best effort (the broker may be what is gone): the same command the daemon sends on shutdown.
  safe: (level) => ({
    via: 'mqtt',
    topic: level.commandTopic,
    payload: levelCommandPayload(Math.round(level.safeLevel * level.levelScale), level.commandField),
    deadMan: NO_DEAD_MAN,
  }),
});
