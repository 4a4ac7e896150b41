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
  resolveAvailabilityTopic,
  resolveDeadManS,
  switchDeadMan,
  switchPayloads,
} from './mqtt-switch-rules.js';
import { NO_DEAD_MAN, relayOutput } from './shared.js';

const schema = z
  .strictObject({
    kind: z.literal('mqtt_switch').describe('Actuator kind: decides which other keys apply. Required.'),
    preset: z
      .enum(SWITCH_PRESET_NAMES)
      .optional()
      .describe(
        'Topics and payloads of a device family, with device: tasmota (cmnd/<device>/POWER ON/OFF, ' +
          'state stat/<device>/POWER), zigbee2mqtt (<device>/set {"state":"ON"}, state field state of ' +
          '<device>), shelly (Gen2/Gen3: a Switch.Set RPC on <device>/rpc, state field output of ' +
          '<device>/status/switch:<switchId>, published only with "Generic status update over MQTT" ' +
          'enabled on the device), esphome (<device>/switch/<entity>/command ON/OFF, state ' +
          '<device>/switch/<entity>/state). Fields given here override the preset. See docs/devices.md. ' +
          'Default: none, give every topic and payload.',
      ),
    device: plainTopic
      .optional()
      .describe(
        "With preset: tasmota, the device's Topic (plug); zigbee2mqtt, its topic with the base " +
          '(zigbee2mqtt/heater_plug); shelly, its MQTT topic prefix (its id by default, ' +
          'shellyplus1-a8032ab12345); esphome, its topic_prefix (the node name by default). ' +
          'Default: none; required with preset.',
      ),
    switchId: z
      .number()
      .int()
      .min(0)
      .max(15)
      .optional()
      .describe(
        "With preset shelly: which relay, the Switch component's id (switch:<id>; 0 is the first, " +
          '1 the second of a Shelly Plus 2PM). Default 0.',
      ),
    entity: z
      .string()
      // ESPHome's object id keeps a-z, 0-9, _ and - (aioesphomeapi object_id.py)
      .regex(/^[a-z0-9_-]+$/, 'must be an ESPHome object id: lower-case letters, digits, _ and -')
      .optional()
      .describe(
        "With preset esphome: the switch's object id, its name in lower case with _ for spaces " +
          '(relay for <device>/switch/relay/command). Default: none; required with preset esphome.',
      ),
    availabilityTopic: plainTopic
      .optional()
      .describe(
        'Where the device says it is online or offline (online/offline, Online/Offline, true/false, ' +
          '{"state":"online"}): offline makes ActuatorConfirmed False ("device offline") in the cycle ' +
          'the message arrives, and the last state unknown; commands keep going, and one left ' +
          'unconfirmed is sent again when the device is back. Default: from the preset (tasmota ' +
          'tele/<device>/LWT, zigbee2mqtt <device>/availability, shelly <device>/online, esphome ' +
          '<device>/status), else none.',
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
          'yours turns off after a short on_time first. shelly: toggle_after in every ON (Switch.Set ' +
          "params, the switch's flip-back timer), never in an OFF. esphome: none over MQTT (use 0). " +
          'At least 360 (the 300 s keep-alive + 60 s); at most 64800 (tasmota), 6553 (zigbee2mqtt) or ' +
          '86400 (shelly); 0 = off; needs a preset. Default 600 with preset tasmota (0 with safeState ' +
          'on, or a command topic not ending in /POWER<n>) or shelly (0 with safeState on), 0 otherwise.',
      ),
    ...relayFields,
  })
  .describe(
    'An on/off relay behind MQTT (Tasmota, Zigbee2MQTT, Shelly Gen2/Gen3 or ESPHome); needs the mqtt block. ' +
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
    ...optionalTopic(resolveAvailabilityTopic(raw)),
  };
}

/** `{ availabilityTopic }` when there is one: a resolved section carries no undefined keys. */
function optionalTopic(topic: string | undefined): { availabilityTopic?: string } {
  return topic === undefined ? {} : { availabilityTopic: topic };
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
  driverFields: [
    'preset',
    'device',
    ...REQUIRED_SWITCH_KEYS,
    'stateField',
    'stateStaleAfterS',
    'deadManS',
    'availabilityTopic',
  ],
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
      monotonicMs: ctx.monotonicMs,
      logger: ctx.logger,
      deadMan: switchDeadMan(relay),
      availabilityTopic: relay.availabilityTopic,
      replyTopic: relay.replyTopic,
    }),
  // Best effort (the broker may be what is gone): the same command the daemon sends on shutdown.
  safe: (relay) => ({
    via: 'mqtt',
    topic: relay.commandTopic,
    payload: relay.safeState === 'on' ? relay.payloadOn : relay.payloadOff,
    deadMan: deadManText(relay),
  }),
});

/** What protects the plug when `safe` cannot reach the broker: its own dead man's switch, if any. */
function deadManText(relay: MqttSwitchConfig): string {
  if (relay.deadManS <= 0) return `${NO_DEAD_MAN} (deadManS 0)`;
  const how =
    relay.preset === 'tasmota'
      ? 'Tasmota PulseTime'
      : relay.preset === 'shelly'
        ? 'Shelly toggle_after'
        : 'Zigbee2MQTT on_time';
  return `turns itself off ≤ ${relay.deadManS} s after its last ON (${how})`;
}
