/**
 * The MQTT drivers as the tests build them, on any transport (usually a FakeTransport), with
 * a clock moved by hand unless `extra` gives one. `extra` overrides any option.
 */
import {
  MqttLevel,
  type MqttLevelOptions,
  MqttSwitch,
  type MqttSwitchOptions,
} from '../../../src/drivers/mqtt/actuator.js';
import { MqttSensor, type MqttSensorOptions } from '../../../src/drivers/mqtt/sensor.js';
import { switchPreset } from '../../../src/drivers/mqtt/switch-presets.js';
import type { MqttTransport } from '../../../src/drivers/mqtt/transport.js';
import { manualTime } from './fake-transport.js';

/** Topics of the Tasmota plug `plug`. */
export const PLUG_TOPICS = { command: 'cmnd/plug/POWER', state: 'stat/plug/POWER' } as const;
/** Topics of the Tasmota dimmer `dim` (state in the field `Dimmer` of RESULT). */
export const DIMMER_TOPICS = { command: 'cmnd/dim/Dimmer', state: 'stat/dim/RESULT' } as const;
/** Where the Tasmota sensor `th1` publishes. */
export const SENSOR_TOPIC = 'tele/th1/SENSOR';
/** A Zigbee2MQTT plug's base topic. */
export const ZIGBEE_PLUG = 'zigbee2mqtt/heater_plug';

/** A Tasmota plug `plug` driven as actuator `heater`, its state stale after 600 s. Not started. */
export function tasmotaSwitch(transport: MqttTransport, extra: Partial<MqttSwitchOptions> = {}): MqttSwitch {
  return new MqttSwitch({
    id: 'heater',
    transport,
    ...switchPreset('tasmota', 'plug'),
    stateStaleAfterMs: 600_000,
    nowMs: manualTime().nowMs,
    ...extra,
  });
}

/** A Zigbee2MQTT plug ({@link ZIGBEE_PLUG}) driven as actuator `heater`. Not started. */
export function zigbeeSwitch(transport: MqttTransport, extra: Partial<MqttSwitchOptions> = {}): MqttSwitch {
  return tasmotaSwitch(transport, { ...switchPreset('zigbee2mqtt', ZIGBEE_PLUG), ...extra });
}

/** A Tasmota dimmer driven as continuous actuator `fan`, in percent. Not started. */
export function tasmotaDimmer(transport: MqttTransport, extra: Partial<MqttLevelOptions> = {}): MqttLevel {
  return new MqttLevel({
    id: 'fan',
    transport,
    commandTopic: DIMMER_TOPICS.command,
    stateTopic: DIMMER_TOPICS.state,
    stateField: 'Dimmer',
    levelScale: 100,
    stateStaleAfterMs: 600_000,
    nowMs: manualTime().nowMs,
    ...extra,
  });
}

/** A sensor `room` on {@link SENSOR_TOPIC} (the payload is the number unless `field`), stale after 180 s. Not started. */
export function topicSensor(transport: MqttTransport, extra: Partial<MqttSensorOptions> = {}): MqttSensor {
  return new MqttSensor({
    id: 'room',
    transport,
    topic: SENSOR_TOPIC,
    staleAfterMs: 180_000,
    nowMs: manualTime().nowMs,
    ...extra,
  });
}
