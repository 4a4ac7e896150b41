import { z } from 'zod';
import { MqttSwitch } from '../../drivers/mqtt/actuator.js';
import { SWITCH_PRESET_NAMES, type SwitchPayloads } from '../../drivers/mqtt/switch-presets.js';
import {
  fieldPath,
  plainTopic,
  relayFields,
  resolveRelayBand,
  stateStaleAfterS,
  type WithBand,
} from '../fields.js';
import { actuatorKind } from '../types.js';
import {
  checkMqttSwitch,
  REQUIRED_SWITCH_KEYS,
  resolveDeadManS,
  switchDeadMan,
  switchPayloads,
} from './mqtt-switch-rules.js';
import { relayOutput } from './shared.js';

const schema = z
  .strictObject({
    kind: z.literal('mqtt_switch').describe('Actuator kind: decides which other keys apply. Required.'),
    preset: z
      .enum(SWITCH_PRESET_NAMES)
      .optional()
      .describe(
        'Topics and payloads of a device family, with device: tasmota (cmnd/<device>/POWER ON/OFF, ' +
          'state stat/<device>/POWER), zigbee2mqtt (<device>/set {"state":"ON"}, state field state of ' +
          '<device>). Fields given here override the preset. Default: none, give every topic and payload.',
      ),
    device: plainTopic
      .optional()
      .describe(
        "With preset: tasmota, the device's Topic (plug); zigbee2mqtt, its topic with the base " +
          '(zigbee2mqtt/heater_plug). Default: none; required with preset.',
      ),
    commandTopic: plainTopic
      .optional()
      .describe('Topic commands are published on (QoS 1, never retained). Default: from the preset.'),
    stateTopic: plainTopic
      .optional()
      .describe('Topic the device reports its actual state on. Default: from the preset.'),
    payloadOn: z.string().min(1).optional().describe('Command that switches on. Default: from the preset.'),
    payloadOff: z.string().min(1).optional().describe('Command that switches off. Default: from the preset.'),
    stateOn: z
      .string()
      .min(1)
      .optional()
      .describe(
        "State meaning on (compared ignoring case; JSON true reads as 'true'). Default: from the preset.",
      ),
    stateOff: z.string().min(1).optional().describe('State meaning off. Default: from the preset.'),
    stateField: fieldPath
      .optional()
      .describe(
        'Dot path of the state in a JSON state payload (state for Zigbee2MQTT, output for Shelly Plus). ' +
          'Default: from the preset, else the whole payload.',
      ),
    stateStaleAfterS,
    deadManS: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Device-side dead man's switch, seconds: the plug turns itself off this long after the last ON " +
          'unless homeostat sends ON again, which it does every 300 s while it wants the plug on, so a ' +
          'plug left on when homeostat dies, hangs or loses the broker switches itself off. tasmota: ' +
          'PulseTime<n>, sent when the driver starts and before every ON (kept on the device; it also ' +
          "times a press of the plug's button; never use PowerOnState 5 with it). zigbee2mqtt: on_time " +
          'in every ON ({"state":"ON","on_time":n}), only for devices with On With Timed Off: check ' +
          'yours turns off after a short on_time first. At least 360 (the 300 s keep-alive + 60 s); at ' +
          'most 64800 (tasmota) or 6553 (zigbee2mqtt); 0 = off; needs a preset. Default 600 with preset ' +
          'tasmota (0 with safeState on, or a command topic not ending in /POWER<n>), 0 otherwise.',
      ),
    ...relayFields,
  })
  .describe(
    'An on/off relay behind MQTT (Tasmota or Zigbee2MQTT plug, Shelly relay); needs the mqtt block. ' +
      'Commands are absolute (never TOGGLE), confirmed on the state topic, re-sent when unconfirmed.',
  )
  .superRefine(checkMqttSwitch);

type RawMqttSwitch = z.output<typeof schema>;
/** An MQTT relay with its preset applied: every topic and payload resolved, deadManS (0 = off) too. */
export type MqttSwitchConfig = Omit<WithBand<RawMqttSwitch>, keyof SwitchPayloads | 'deadManS'> &
  SwitchPayloads & { deadManS: number };

function resolveSwitch(raw: RawMqttSwitch): MqttSwitchConfig {
  // checkMqttSwitch guarantees every required key; the fallbacks only keep types honest.
  const payloads = switchPayloads(raw);
  return {
    ...resolveRelayBand(raw),
    ...payloads,
    commandTopic: payloads.commandTopic ?? '',
    stateTopic: payloads.stateTopic ?? '',
    payloadOn: payloads.payloadOn ?? '',
    payloadOff: payloads.payloadOff ?? '',
    stateOn: payloads.stateOn ?? '',
    stateOff: payloads.stateOff ?? '',
    deadManS: resolveDeadManS(raw, payloads),
  };
}

export const mqttSwitch = actuatorKind<typeof schema, MqttSwitchConfig>({
  kind: 'mqtt_switch',
  schema,
  ...relayOutput,
  simulated: false,
  usesMqtt: true,
  resolve: resolveSwitch,
  commandTopic: (raw) => switchPayloads(raw).commandTopic,
  // preset and device only matter through what they resolve to, but a changed preset changes
  // how the dead man's switch is sent: kept in the key.
  driverFields: ['preset', 'device', ...REQUIRED_SWITCH_KEYS, 'stateField', 'stateStaleAfterS', 'deadManS'],
  createDriver: (relay, ctx) =>
    new MqttSwitch({
      id: ctx.id,
      transport: ctx.transport(),
      commandTopic: relay.commandTopic,
      stateTopic: relay.stateTopic,
      payloadOn: relay.payloadOn,
      payloadOff: relay.payloadOff,
      stateOn: relay.stateOn,
      stateOff: relay.stateOff,
      stateField: relay.stateField,
      stateStaleAfterMs: relay.stateStaleAfterS * 1000,
      nowMs: ctx.nowMs,
      logger: ctx.logger,
      deadMan: switchDeadMan(relay),
    }),
});
