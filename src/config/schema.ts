/**
 * homeostat's configuration, version 1: the desired state as data.
 *
 * One zod schema is the single source of truth for three things: validation (with
 * `path: message` errors, see load.ts), the TypeScript types below, and the JSON Schema that
 * editors use for completion (emit-json-schema.ts, `config/homeostat.schema.json`).
 *
 * Parsing happens in three steps, all inside `configSchema`:
 * 1. shape: strict objects (an unknown key is an error: a typo must not silently fall back
 *    to a default), plain `.default()`s;
 * 2. checks: a loop's own rules (limits, mode), then cross-references between sections;
 * 3. resolution of the defaults that depend on other fields (a loop's mode from its
 *    actuators, staleness from the sensor period…), so consumers never re-derive them.
 *
 * Durations are seconds with an `S` suffix. A loop's values (setpoint, limits, deadband,
 * tolerances) are in the loop's unit: °C for temperature, %RH for humidity.
 */

import { z } from 'zod';
import { defaultDerivativeFilterS } from '../core/pid.js';
import type { Mode, Quantity } from '../core/types.js';
import {
  DEAD_MAN_MAX_S,
  deadManFor,
  FIELD_PATH_PATTERN,
  plainTopicProblem,
  SWITCH_PRESET_NAMES,
  type SwitchPayloads,
  switchPreset,
} from '../drivers/mqtt/payload.js';
import { LOOP_POLICY } from './to-loop-spec.js';

// ---------------------------------------------------------------------------------------
// Vocabulary

const MODES = [
  'off',
  'heat',
  'cool',
  'heat_cool',
  'humidify',
  'dehumidify',
  'auto',
] as const satisfies readonly Mode[];
const QUANTITIES = ['temperature', 'humidity', 'generic'] as const satisfies readonly Quantity[];

/** Node ids end up in MQTT topics and Home Assistant unique ids. */
export const NODE_ID_PATTERN = /^[a-z0-9_-]+$/;
/** Loop ids end up in MQTT topics and Home Assistant entity ids (which have no `-`). */
export const LOOP_ID_PATTERN = /^[a-z0-9_]+$/;
/** Sensor, actuator and plant ids: same alphabet as node ids, so paths and topics stay plain. */
export const ID_PATTERN = /^[a-z0-9_-]+$/;

const modeSchema = z
  .enum(MODES)
  .describe(
    'What the loop is asked to do: off, heat, cool, heat_cool (temperature/generic), humidify, dehumidify, auto (humidity).',
  );

const idKey = (what: string) =>
  z.string().regex(ID_PATTERN, { error: `invalid ${what} id: use lowercase letters, digits, _ and -` });

const ref = (what: string) => z.string().min(1).describe(`Id of a ${what} defined in this file.`);

/** An exact MQTT topic: wildcards would match other devices, `$` topics are the broker's. */
const plainTopic = z.string().superRefine((topic, ctx) => {
  const problem = plainTopicProblem(topic);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A dot path into a JSON payload. */
const fieldPath = z.string().regex(FIELD_PATH_PATTERN, {
  error: 'use a dot path such as AM2301.Temperature (no spaces, no empty parts)',
});

const rangeSchema = (what: string) =>
  z.strictObject({
    min: z.number().describe(`Lowest ${what}, in the loop's unit.`),
    max: z.number().describe(`Highest ${what}, in the loop's unit; must be greater than min.`),
  });

// ---------------------------------------------------------------------------------------
// Node, MQTT, storage

const nodeSchema = z
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

const mqttSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .default('mqtt://127.0.0.1:1883')
      .describe('Broker URL. Default mqtt://127.0.0.1:1883.'),
    baseTopic: z
      .string()
      .min(1)
      .default('homeostat')
      .describe('First topic level; topics are <baseTopic>/<node.id>/… Default homeostat.'),
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe('MQTT client id; keep it stable. Default: derived from node.id.'),
    username: z.string().optional().describe('Broker user name. Default: none (anonymous).'),
    passwordFile: z
      .string()
      .optional()
      .describe(
        'Path of a file holding the broker password (kept out of this file; the environment variable ' +
          'HOMEOSTAT_MQTT_PASSWORD works too). Never logged. Default: none.',
      ),
    protocolVersion: z
      .union([z.literal(5), z.literal(4)])
      .default(5)
      .describe('MQTT protocol: 5, or 4 for MQTT 3.1.1 brokers. Default 5.'),
    tls: z
      .strictObject({
        caFile: z.string().optional().describe('CA certificate (PEM) that signed the broker certificate.'),
        certFile: z.string().optional().describe('Client certificate (PEM), for brokers that require one.'),
        keyFile: z.string().optional().describe('Client private key (PEM).'),
      })
      .optional()
      .describe('TLS files for an mqtts:// broker. Default: the system CAs, no client certificate.'),
    heartbeatS: z
      .number()
      .gt(0)
      .default(60)
      .describe('An unchanged loop state is republished (retained) this often, seconds. Default 60.'),
    discovery: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Publish Home Assistant discovery. Default true.'),
        prefix: z
          .string()
          .min(1)
          .default('homeassistant')
          .describe('Discovery topic prefix. Default homeassistant.'),
      })
      .prefault({})
      .describe('Home Assistant MQTT discovery.'),
  })
  .describe('MQTT broker connection. Absent: no MQTT unless the command line gives a broker URL.');

const storageSchema = z
  .strictObject({
    path: z.string().min(1).optional().describe('SQLite database file. Default: chosen by the command line.'),
    memoryFlushS: z
      .number()
      .gt(0)
      .default(600)
      .describe(
        'Seconds between writes of controller memory, status, history and routine events, batched in ' +
          'one transaction to spare SD cards; a crash loses at most this much of them (setpoints and ' +
          'modes are written at once). Every commit rewrites whole pages, so fewer commits write less: ' +
          'about 0.6–0.9 MB per loop per day at 600, 3–5 MB at 30 (npm run bench:storage). Default 600.',
      ),
    rawRetentionS: z
      .number()
      .gt(0)
      .default(7 * 86_400)
      .describe('Seconds history keeps every reading; older ones are downsampled. Default 604800 (7 days).'),
    downsampleS: z
      .number()
      .int()
      .min(0)
      .default(300)
      .describe(
        'Seconds per average that replaces readings older than rawRetentionS (setpoint, measured and ' +
          'output averaged, the most frequent action); 0 deletes them instead. Default 300.',
      ),
    downsampledRetentionS: z
      .number()
      .gt(0)
      .default(365 * 86_400)
      .describe('Seconds history keeps the averages. Default 31536000 (365 days).'),
    eventRetentionS: z
      .number()
      .gt(0)
      .default(90 * 86_400)
      .describe('Seconds the event log keeps an event. Default 7776000 (90 days).'),
  })
  .describe('Where desired state, controller memory and history are kept.');

// ---------------------------------------------------------------------------------------
// GPIO (Raspberry Pi)

const gpioSchema = z
  .strictObject({
    sysfsRoot: z
      .string()
      .min(1)
      .default('/sys')
      .describe('Where sysfs is mounted. Default /sys; tests point it at a fixture directory.'),
    chipLabel: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Label of the GPIO chip whose line N is BCM GPIO N, when detection picks the wrong one. ' +
          'Default: detected (pinctrl-bcm2835, pinctrl-bcm2711, pinctrl-rp1, else the lowest-based chip ' +
          'with at least 54 lines).',
      ),
    base: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'sysfs number of BCM GPIO 0; wins over chipLabel and detection (sysfs is then not read). ' +
          'Override only if detection fails. Default: detected.',
      ),
  })
  .describe(
    'Raspberry Pi GPIO, for the gpio_relay, gpio_input and pulse_rate kinds (and the 1-Wire bus of ' +
      'ds18b20). Pins are BCM numbers (GPIO17, not header pin 11), resolved through ' +
      '/sys/class/gpio/gpiochip*/label and base: the base is 512 on a Pi 4 with Bookworm, 571 on a ' +
      'Pi 5, 0 on older kernels. Applies to GPIO drivers created after it changes (all of them at the ' +
      'next start). Default: detected under /sys.',
  );

// ---------------------------------------------------------------------------------------
// Simulation

const disturbanceSchema = z.strictObject({
  atS: z.number().min(0).describe('When it starts, seconds after the simulation starts.'),
  offset: z
    .number()
    .describe('Steady-state shift it adds to the plant (°C or %RH), e.g. -3 for an open window.'),
  durationS: z.number().gt(0).optional().describe('How long it lasts, seconds. Default: forever.'),
});

const plantSchema = z
  .strictObject({
    kind: z
      .enum(['thermal', 'humidity'])
      .default('thermal')
      .describe('What the plant models. Default thermal.'),
    ambient: z.number().describe('Value (°C or %RH) the plant settles to with every input off. Required.'),
    initial: z.number().optional().describe('Starting value (°C or %RH). Default: ambient.'),
    timeConstantS: z.number().gt(0).describe('First-order time constant, seconds. Required.'),
    deadTimeS: z
      .number()
      .min(0)
      .default(0)
      .describe('Transport delay between input and response, seconds. Default 0.'),
    noise: z.number().min(0).default(0).describe('Sensor noise standard deviation (°C or %RH). Default 0.'),
    quantization: z
      .number()
      .min(0)
      .default(0)
      .describe('Sensor resolution (°C or %RH), e.g. 0.0625 for a DS18B20. Default 0 (none).'),
    disturbances: z
      .array(disturbanceSchema)
      .default([])
      .describe('Scheduled steps in the ambient. Default none.'),
  })
  .describe('A simulated first-order plant with dead time.');

const simulationSchema = z
  .strictObject({
    plants: z
      .record(idKey('plant'), plantSchema)
      .default({})
      .describe('Simulated plants by id, driven by simulated actuators and read by simulated sensors.'),
    seed: z.number().int().default(1).describe('Random seed for sensor noise, so runs repeat. Default 1.'),
  })
  .describe('Simulated hardware (the demo, tests, --speed).');

// ---------------------------------------------------------------------------------------
// Sensors. To add a kind: define its object with `...sensorCommon`, add it to the union,
// and (if it reads a simulated plant) to `sensorPlant` below; if it talks MQTT, to `usesMqtt`;
// if it uses a GPIO pin, to `gpioPinOf`.

const sensorCommon = {
  periodS: z.number().gt(0).default(10).describe('Seconds between two reads. Default 10.'),
  staleAfterS: z
    .number()
    .gt(0)
    .optional()
    .describe('Seconds after which the latest reading counts as missing. Default 3 × periodS.'),
};

const simulatedSensorSchema = z
  .strictObject({
    kind: z.literal('simulated').describe('Sensor kind.'),
    plant: ref('simulation plant'),
    ...sensorCommon,
  })
  .describe('Reads a simulated plant.');

const mqttSensorSchema = z
  .strictObject({
    kind: z.literal('mqtt').describe('Sensor kind.'),
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

/** A BCM GPIO number: the Pi's main controller has 54 (58 on a Pi 4, the last 4 unused). */
const bcmSchema = z
  .number()
  .int()
  .min(0)
  .max(53)
  .describe(
    'BCM GPIO number, 0..53 (GPIO17 of pinout diagrams, not the header pin); each pin once per file. ' +
      'Required.',
  );

const ds18b20Schema = z
  .strictObject({
    kind: z.literal('ds18b20').describe('Sensor kind.'),
    address: z
      .string()
      .regex(/^28-[0-9a-f]{12}$/i, { error: 'use the 1-Wire address, e.g. 28-0316a2795bff' })
      .optional()
      .describe(
        'Its directory under /sys/bus/w1/devices, e.g. 28-0316a2795bff. Default: the only DS18B20 ' +
          'present (an error when there are several).',
      ),
    ...sensorCommon,
    plausible: z
      .strictObject({
        min: z.number().describe('Lowest believable reading, °C.'),
        max: z.number().describe('Highest believable reading, °C; must be greater than min.'),
      })
      .optional()
      .describe(
        'Readings outside are rejected by the driver (kept out of history too), °C. Default -55..125.',
      ),
    maxRatePerS: z
      .number()
      .gt(0)
      .default(1)
      .describe(
        'Fastest believable change, °C/s; a faster jump is rejected unless the next read confirms it. Default 1.',
      ),
  })
  .describe(
    'A DS18B20 temperature probe on the 1-Wire bus (dtoverlay=w1-gpio in /boot/firmware/config.txt, ' +
      'GPIO4 by default, 4.7 kΩ pull-up), °C. Rejects CRC errors, the 85 °C power-on value and jumps.',
  )
  .superRefine((sensor, ctx) => {
    if (sensor.plausible && !(sensor.plausible.min < sensor.plausible.max)) {
      ctx.addIssue({
        code: 'custom',
        path: ['plausible', 'min'],
        message: 'must be less than plausible.max',
      });
    }
  });

const gpioInputSchema = z
  .strictObject({
    kind: z.literal('gpio_input').describe('Sensor kind.'),
    bcm: bcmSchema,
    activeLow: z
      .boolean()
      .default(false)
      .describe('Read 1 when the pin is low (a switch to ground with a pull-up). Default false.'),
    debounceMs: z
      .number()
      .int()
      .min(0)
      .default(20)
      .describe('An edge counts once the level has been stable this long, ms; 0 = off. Default 20.'),
    ...sensorCommon,
  })
  .describe(
    'A digital input read as 0 or 1 (window contact, float switch); use quantity generic. Read every ' +
      'periodS and at once on each edge. Set the pull-up/down in config.txt (gpio=<bcm>=ip,pu).',
  );

const pulseRateSchema = z
  .strictObject({
    kind: z.literal('pulse_rate').describe('Sensor kind.'),
    bcm: bcmSchema,
    activeLow: z
      .boolean()
      .default(false)
      .describe('Invert the pin (an open-collector output pulling low). Default false.'),
    edge: z
      .enum(['rising', 'falling'])
      .default('rising')
      .describe('Which transition is one pulse (after activeLow). Default rising.'),
    windowS: z
      .number()
      .gt(0)
      .default(60)
      .describe(
        'Pulses are counted over the last windowS seconds; longer is smoother and slower. No reading ' +
          'until one window has passed. Default 60.',
      ),
    factor: z
      .number()
      .gt(0)
      .default(1)
      .describe(
        'Quantity per pulse: the reading is pulses per minute × factor. 0.0022222 (1/450 L per pulse, ' +
          'a YF-S201 flow meter) gives L/min. Default 1 (pulses/min).',
      ),
    ...sensorCommon,
  })
  .describe(
    'A pulse counter read as a rate (flow meter, anemometer, S0 energy meter); use quantity generic. ' +
      'No debounce: bouncy reed contacts need an RC filter.',
  );

const sensorSchema = z.discriminatedUnion('kind', [
  simulatedSensorSchema,
  mqttSensorSchema,
  ds18b20Schema,
  gpioInputSchema,
  pulseRateSchema,
]);

// ---------------------------------------------------------------------------------------
// Actuators. To add a kind: define its object, add it to the union and, if it drives a
// simulated plant, to `actuatorPlant` below; a relay spreads `relayFields` and goes in
// `isRelay`; an MQTT one goes in `usesMqtt`; a GPIO one in `gpioPinOf`; its safe level in
// to-loop-spec.ts `safeLevelOf`.

const gainSchema = z
  .number()
  .describe(
    'Steady-state change of the plant at full output (°C or %RH): +20 for a heater, -15 for a cooler.',
  );

/** Safety limit shared by every actuator kind (safety-monitors.ts). */
const maxOnSchema = z
  .number()
  .gt(0)
  .optional()
  .describe(
    'Longest time continuously on (above 0), seconds: reaching it switches every actuator of the ' +
      'loop safe and latches a fault until reset (a pump running dry, a leak, a door left open). Set ' +
      'it above the longest run the plant ever needs. Needs a safe state of off (0). Default: no limit.',
  );

/** How a relay is driven: shared by every relay kind (simulated, MQTT, GPIO). */
const relayFields = {
  minOnS: z
    .number()
    .min(0)
    .default(0)
    .describe('Shortest on time, seconds (protects compressors). Default 0.'),
  minOffS: z.number().min(0).default(0).describe('Shortest off time, seconds. Default 0.'),
  windowS: z
    .number()
    .gt(0)
    .default(600)
    .describe(
      'Time-proportioning window, seconds (modulation window): a PID output of 0.3 is on 30 % of each window. Default 600.',
    ),
  modulation: z
    .enum(['window', 'band'])
    .default('window')
    .describe(
      'How a PID output (0..1) drives the relay. window: time-proportioning over windowS, a predictable ' +
        'switching rate (relay wear, compressors). band: on above output 0.5 + kp·bandC, off below ' +
        '0.5 − kp·bandC; regulates closer at a similar rate, best with PI (tdS 0). Needs a pid controller. ' +
        'Minimum on/off times hold with both. Default window.',
    ),
  bandC: z
    .number()
    .gt(0)
    .default(0.25)
    .describe(
      "modulation band only: half width of the band in the loop's unit (°C, %RH); on the PID output " +
        'it is kp·bandC, which must stay below 0.5. Wider: fewer switches, more ripple. Default 0.25.',
    ),
  safeState: z
    .enum(['off', 'on'])
    .default('off')
    .describe('State forced on faults, stale readings and shutdown. Default off.'),
  maxStartsPerHour: z
    .number()
    .int()
    .gt(0)
    .optional()
    .describe(
      'Most switch-ons in any hour (compressor and relay wear; 6 suits most compressors): a further ' +
        'start waits until the oldest is an hour old; switching off is always allowed. Needs safeState ' +
        'off. Default: no cap.',
    ),
  maxOnS: maxOnSchema,
};

const simulatedRelaySchema = z
  .strictObject({
    kind: z.literal('simulated_relay').describe('Actuator kind.'),
    plant: ref('simulation plant'),
    gain: gainSchema,
    ...relayFields,
  })
  .describe('A simulated on/off relay acting on a plant.');

const simulatedContinuousSchema = z
  .strictObject({
    kind: z.literal('simulated_continuous').describe('Actuator kind.'),
    plant: ref('simulation plant'),
    gain: gainSchema,
    safeLevel: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe('Output (0..1) forced on faults, stale readings and shutdown. Default 0.'),
    maxOnS: maxOnSchema,
  })
  .describe('A simulated actuator with a continuous output 0..1.');

const stateStaleAfterS = z
  .number()
  .gt(0)
  .default(600)
  .describe(
    'A state report older than this many seconds makes the state unknown, and the command is sent ' +
      'again. Keep it above the keep-alive (300 s): the command is re-sent that often and devices ' +
      'answer it with their state. Default 600.',
  );

const mqttSwitchSchema = z
  .strictObject({
    kind: z.literal('mqtt_switch').describe('Actuator kind.'),
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
          '(zigbee2mqtt/heater_plug).',
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

const mqttLevelSchema = z
  .strictObject({
    kind: z.literal('mqtt_level').describe('Actuator kind.'),
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
    safeLevel: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe('Output (0..1) forced on faults, stale readings and shutdown. Default 0.'),
    maxOnS: maxOnSchema,
  })
  .describe(
    'A continuous actuator behind MQTT (dimmer, valve, fan speed) taking a level and reporting it ' +
      'back; needs the mqtt block.',
  );

const gpioRelaySchema = z
  .strictObject({
    kind: z.literal('gpio_relay').describe('Actuator kind.'),
    bcm: bcmSchema,
    activeLow: z
      .boolean()
      .default(true)
      .describe(
        'The relay is energised when the pin is low, as on most opto-isolated relay boards; false for ' +
          'boards switched by a high pin. Default true.',
      ),
    ...relayFields,
  })
  .describe(
    'A relay on a Raspberry Pi GPIO pin, read back every cycle. Never switched on at start; a pin ' +
      'still exported from a previous run is adopted at its level, without a glitch.',
  );

const actuatorSchema = z.discriminatedUnion('kind', [
  simulatedRelaySchema,
  simulatedContinuousSchema,
  mqttSwitchSchema,
  mqttLevelSchema,
  gpioRelaySchema,
]);

// ---------------------------------------------------------------------------------------
// Controllers

const pidSchema = z
  .strictObject({
    type: z.literal('pid').describe('Controller type.'),
    kp: z.number().gt(0).describe('Proportional gain: output fraction (0..1) per unit of error. Required.'),
    tiS: z.number().min(0).default(0).describe('Integral time, seconds; 0 = no integral action. Default 0.'),
    tdS: z
      .number()
      .min(0)
      .default(0)
      .describe('Derivative time, seconds; 0 = no derivative action. Default 0.'),
    derivativeFilterS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'Time constant of the derivative low-pass filter, seconds. Default tdS (bounds the effect of a sensor step on D to kp × step).',
      ),
    setpointWeight: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        'Weight b of the setpoint in the proportional term (b·r − y); < 1 softens setpoint steps. Default 1.',
      ),
    model: z
      .strictObject({
        gain: z.number().describe('Plant steady-state change at full output (loop unit).'),
        ambient: z.number().describe('Plant value with every output off (loop unit).'),
      })
      .optional()
      .describe(
        'Plant model enabling setpoint feedforward: output ≈ (setpoint − ambient) / gain. Default none.',
      ),
  })
  .describe(
    "PID controller; on a relay its output (0..1) is time-proportioned over windowS, or switched on a band (the relay's modulation).",
  );

const hysteresisSchema = z
  .strictObject({
    type: z.literal('hysteresis').describe('Controller type.'),
    coldTolerance: z
      .number()
      .min(0)
      .default(0.3)
      .describe('Raise turns on below setpoint − coldTolerance (loop unit). Default 0.3.'),
    hotTolerance: z
      .number()
      .min(0)
      .default(0.3)
      .describe('Lower turns on above setpoint + hotTolerance (loop unit). Default 0.3.'),
  })
  .describe('On/off controller with tolerances, like Home Assistant generic_thermostat.');

const controllerSchema = z.discriminatedUnion('type', [pidSchema, hysteresisSchema]);

// ---------------------------------------------------------------------------------------
// Loops

const loopSchema = z
  .strictObject({
    name: z.string().min(1).optional().describe('Human-readable name. Default: the loop id.'),
    quantity: z
      .enum(QUANTITIES)
      .default('temperature')
      .describe('What is regulated; decides the modes and defaults. Default temperature.'),
    unit: z.string().optional().describe('Unit of the values. Default °C for temperature, % for humidity.'),
    sensor: ref('sensor').describe('Id of the sensor that measures the quantity. Required.'),
    raise: ref('actuator')
      .optional()
      .describe(
        'Id of the actuator that raises the quantity (heater, humidifier). At least one of raise/lower.',
      ),
    lower: ref('actuator')
      .optional()
      .describe(
        'Id of the actuator that lowers the quantity (cooler, dehumidifier). At least one of raise/lower.',
      ),
    setpoint: z.number().describe('Target value (loop unit); must lie within limits. Required.'),
    mode: modeSchema
      .optional()
      .describe(
        'Initial mode. Default: heat_cool/auto with both actuators, heat/humidify with only raise, cool/dehumidify with only lower.',
      ),
    limits: rangeSchema('setpoint allowed (from this file, MQTT or Home Assistant)').describe(
      'Setpoint limits (loop unit). Required.',
    ),
    step: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'Setpoint step for user interfaces (loop unit). Default 0.5 (temperature, generic), 1 (humidity).',
      ),
    staleAfterS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        "A reading older than this many seconds is missing: safe state. Default: the sensor's staleAfterS.",
      ),
    retryInitialS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'First re-send of an actuator command not yet confirmed, seconds; doubles per attempt up to ' +
          'the keep-alive (300 s). Raise it for devices that answer slowly. Default 5.',
      ),
    plausible: rangeSchema('plausible reading')
      .optional()
      .describe(
        'Readings outside are faults: safe state. Default -55..125 (temperature), 0..100 (humidity), none (generic).',
      ),
    deadband: z
      .number()
      .min(0)
      .default(0)
      .describe('Split range: no action while |setpoint − measured| ≤ deadband / 2 (loop unit). Default 0.'),
    changeoverS: z
      .number()
      .min(0)
      .default(300)
      .describe(
        'Minimum seconds between one direction switching off and the other switching on. Default 300.',
      ),
    effectWatch: z
      .strictObject({
        periodS: z
          .number()
          .gt(0)
          .default(900)
          .describe('How long full output may go without effect, seconds. Default 900.'),
        minChange: z
          .number()
          .gt(0)
          .default(1)
          .describe('The least change (loop unit) full output must achieve within periodS. Default 1.'),
      })
      .optional()
      .describe(
        'Latch a fault when full heating (cooling) does not move the value by minChange within periodS, ' +
          "like Marlin's thermal protection: every actuator safe until the fault is reset (MQTT " +
          '<loop>/fault/reset or the Home Assistant button). Choose periodS from how fast the plant ' +
          'responds at full output. Default: off.',
      ),
    cutoff: z
      .strictObject({
        max: z
          .number()
          .optional()
          .describe(
            'The loop never raises the value at or above this (loop unit): reached with the raise ' +
              'actuator on, every actuator goes safe at once and the fault latches. Must lie above ' +
              'limits.max. Default: none.',
          ),
        min: z
          .number()
          .optional()
          .describe(
            'The loop never lowers the value at or below this (loop unit): reached with the lower ' +
              'actuator on, every actuator goes safe at once and the fault latches. Must lie below ' +
              'limits.min. Default: none.',
          ),
      })
      .optional()
      .describe(
        'Absolute cut-off, independent of the setpoint and the controller (a fermenter 30 °C, a kettle ' +
          '105 °C, a freezer min -30 °C), like Marlin MAXTEMP. Latches only while an actuator that pushes ' +
          'further is on: beyond it with that actuator off (the sun, a hot cellar) is no fault of the ' +
          'loop, and a cooler keeps cooling. Reset: MQTT <loop>/fault/reset or the Home Assistant ' +
          'button. Default: off.',
      ),
    stuckWatch: z
      .strictObject({
        periodS: z
          .number()
          .gt(0)
          .default(1800)
          .describe(
            'How long an actuator must have been commanded off before the value moving its way counts, ' +
              "seconds; longer than the relay's window and the overshoot after switching off. Default 1800.",
          ),
        minChange: z
          .number()
          .gt(0)
          .optional()
          .describe(
            'How far (loop unit) the value must move its way from its extreme since off, and be past ' +
              'the setpoint, to latch. Default 2 (°C, temperature), 10 (%RH, humidity); required for generic.',
          ),
      })
      .optional()
      .describe(
        'Welded relay or stuck plug: latch a fault when the value keeps rising (falling) with the heater ' +
          '(cooler) commanded off for periodS, by minChange from its lowest (highest) since and minChange ' +
          'past the setpoint. Off by default because plants drift on their own (a room in the sun, a ' +
          'fermenting beer warms itself): enable it where nothing but the actuator moves the value (a ' +
          'kettle, a tank, a heated box in a cool room). Default: off.',
      ),
    runawayWatch: z
      .strictObject({
        band: z
          .number()
          .gt(0)
          .optional()
          .describe(
            'Distance from the setpoint (loop unit) that counts as lost control once converged. ' +
              'Default 2 (°C, temperature), 10 (%RH, humidity); required for generic.',
          ),
        periodS: z
          .number()
          .gt(0)
          .default(1800)
          .describe(
            'How long the value may stay outside the band at full output, seconds; longer than the ' +
              'plant takes to recover from a door opened. Default 1800.',
          ),
      })
      .optional()
      .describe(
        "Thermal runaway (Marlin's, once stable; Klipper's verify_heater): after the loop converged " +
          'at its setpoint, the value stays more than band away for periodS while the output is ' +
          'saturated towards it (a probe out of the tank, a heater lost): latch a fault. Re-armed at ' +
          'each new setpoint once converged. Off by default: an undersized heater in a hard frost does ' +
          'the same, and latching it off would be worse. Default: off.',
      ),
    interlocks: z
      .array(
        z.strictObject({
          sensor: ref('sensor').describe(
            'Id of the sensor that can pause the loop (a window switch, a float switch).',
          ),
          pauseWhen: z
            .number()
            .default(1)
            .describe(
              'The loop pauses while the sensor reads this value (a 0/1 input: 1 = open). Default 1.',
            ),
        }),
      )
      .default([])
      .describe(
        'Conditions that pause the loop: every actuator at its safe state while any interlock reads its ' +
          'pauseWhen value, or has no fresh reading (a broken switch pauses too). Default none.',
      ),
    controller: controllerSchema.describe('How the output is computed: pid or hysteresis. Required.'),
  })
  .describe('A regulation loop: one sensor, one or two actuators, one setpoint.')
  .superRefine(checkLoop);

// ---------------------------------------------------------------------------------------
// The whole file

const configObjectSchema = z
  .strictObject({
    version: z
      .literal(1, {
        error: (iss) =>
          iss.input === undefined
            ? 'required (add "version: 1")'
            : `unsupported version ${typeof iss.input === 'string' ? JSON.stringify(iss.input) : String(iss.input)}: this homeostat reads version 1`,
      })
      .describe('Config format version. Required: 1.'),
    node: nodeSchema,
    mqtt: mqttSchema.optional(),
    gpio: gpioSchema.optional(),
    storage: storageSchema.prefault({}),
    simulation: simulationSchema.prefault({}),
    sensors: z
      .record(idKey('sensor'), sensorSchema)
      .refine((r) => Object.keys(r).length > 0, 'at least one sensor is required')
      .meta({ description: 'Sensors by id. At least one.', minProperties: 1 }),
    actuators: z
      .record(idKey('actuator'), actuatorSchema)
      .default({})
      .describe('Actuators by id. Default none.'),
    loops: z
      .record(
        z.string().regex(LOOP_ID_PATTERN, { error: 'invalid loop id: use lowercase letters, digits and _' }),
        loopSchema,
      )
      .refine((r) => Object.keys(r).length > 0, 'at least one loop is required')
      .meta({ description: 'Regulation loops by id. At least one.', minProperties: 1 }),
  })
  .describe('homeostat configuration, version 1.');

/** The config schema: parses a YAML-decoded value into a checked, fully resolved `Config`. */
export const configSchema = configObjectSchema.superRefine(checkReferences).transform(resolve);

/** The schema of the file as written (before defaults that depend on other fields). */
export const configInputSchema = configObjectSchema;

// ---------------------------------------------------------------------------------------
// Types (resolved: every default filled in)

type RawConfig = z.output<typeof configObjectSchema>;
type RawLoop = z.output<typeof loopSchema>;
type RawPid = z.output<typeof pidSchema>;

/** A closed range in the loop's unit. */
export interface Range {
  min: number;
  max: number;
}

export type PidConfig = Omit<RawPid, 'derivativeFilterS'> & {
  /** Derivative filter time constant, s. Resolved: defaultDerivativeFilterS(tdS) when absent. */
  derivativeFilterS: number;
};
export type HysteresisConfig = z.output<typeof hysteresisSchema>;
export type ControllerConfig = PidConfig | HysteresisConfig;

/** A sensor; `staleAfterS` resolved to 3 × periodS when absent. */
export type SensorConfig = z.output<typeof sensorSchema> & { staleAfterS: number };
type RawActuator = z.output<typeof actuatorSchema>;
type RawMqttSwitch = z.output<typeof mqttSwitchSchema>;
/** An MQTT relay with its preset applied: every topic and payload resolved, deadManS (0 = off) too. */
export type MqttSwitchConfig = Omit<RawMqttSwitch, keyof SwitchPayloads | 'deadManS'> &
  SwitchPayloads & { deadManS: number };
export type ActuatorConfig = Exclude<RawActuator, { kind: 'mqtt_switch' }> | MqttSwitchConfig;
/** A simulated plant; `initial` resolved to `ambient` when absent. */
export type PlantConfig = z.output<typeof plantSchema> & { initial: number };
export type DisturbanceConfig = z.output<typeof disturbanceSchema>;
export type MqttConfig = z.output<typeof mqttSchema>;
export type StorageConfig = z.output<typeof storageSchema>;
export type GpioConfig = z.output<typeof gpioSchema>;

/**
 * A loop with every default resolved: `name` (loop id), `unit`, `mode`, `step`,
 * `staleAfterS` (the sensor's), `plausible` (±Infinity for generic loops: no check).
 */
export type LoopConfig = Omit<
  RawLoop,
  'name' | 'unit' | 'mode' | 'step' | 'staleAfterS' | 'plausible' | 'controller'
> & {
  name: string;
  unit: string;
  mode: Mode;
  step: number;
  staleAfterS: number;
  plausible: Range;
  controller: ControllerConfig;
};

export interface SimulationConfig {
  plants: Record<string, PlantConfig>;
  seed: number;
}

/** The validated configuration, every default resolved. */
export interface Config {
  version: 1;
  node: { id: string; name: string };
  mqtt?: MqttConfig;
  /** Absent: no GPIO settings written; drivers detect the chip under /sys. */
  gpio?: GpioConfig;
  storage: StorageConfig;
  simulation: SimulationConfig;
  sensors: Record<string, SensorConfig>;
  actuators: Record<string, ActuatorConfig>;
  loops: Record<string, LoopConfig>;
}

// ---------------------------------------------------------------------------------------
// Modes

type LoopShape = Pick<LoopConfig, 'quantity' | 'raise' | 'lower'>;

/**
 * The modes a loop can be put in, from its quantity and which actuators it has:
 * temperature and generic: off, heat (raise), cool (lower), heat_cool (both);
 * humidity: off, humidify (raise), dehumidify (lower), auto (both).
 */
export function allowedModes(loop: LoopShape): Mode[] {
  const [up, down, both]: Mode[] =
    loop.quantity === 'humidity' ? ['humidify', 'dehumidify', 'auto'] : ['heat', 'cool', 'heat_cool'];
  const modes: Mode[] = ['off'];
  if (loop.raise !== undefined) modes.push(up!);
  if (loop.lower !== undefined) modes.push(down!);
  if (loop.raise !== undefined && loop.lower !== undefined) modes.push(both!);
  return modes;
}

/** The mode a loop starts in when the file gives none: the one that uses all its actuators. */
export function defaultMode(loop: LoopShape): Mode {
  return allowedModes(loop).at(-1)!;
}

// ---------------------------------------------------------------------------------------
// Checks. Paths are relative to the refined schema; load.ts turns them into `a.b.c: message`.

/** A loop's own rules (run per loop, so they are reported even when other sections fail). */
function checkLoop(loop: RawLoop, ctx: z.RefinementCtx): void {
  const limitsOk = loop.limits.min < loop.limits.max;
  if (!limitsOk) {
    ctx.addIssue({ code: 'custom', path: ['limits', 'min'], message: 'must be less than limits.max' });
  } else if (loop.setpoint < loop.limits.min || loop.setpoint > loop.limits.max) {
    ctx.addIssue({
      code: 'custom',
      path: ['setpoint'],
      message: `${loop.setpoint} is outside limits ${loop.limits.min}..${loop.limits.max}`,
    });
  }
  if (loop.plausible && !(loop.plausible.min < loop.plausible.max)) {
    ctx.addIssue({ code: 'custom', path: ['plausible', 'min'], message: 'must be less than plausible.max' });
  }
  checkLoopMonitors(loop, ctx);
  if (loop.raise === undefined && loop.lower === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'needs a raise or a lower actuator (or both)' });
  } else if (loop.mode !== undefined) {
    const allowed = allowedModes(loop);
    if (!allowed.includes(loop.mode)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message: `mode "${loop.mode}" is not allowed for this loop (allowed: ${allowed.join(', ')})`,
      });
    }
  }
}

/**
 * maxOnS and maxStartsPerHour limit the time away from the safe state: with a safe state of on
 * they would hold an actuator in its unsafe state, so they need safeState off (safeLevel 0).
 */
function checkSafetyLimits(
  actuator: RawActuator,
  path: string[],
  issue: (path: (string | number)[], message: string) => void,
): void {
  const safeOn = 'safeState' in actuator ? actuator.safeState === 'on' : actuator.safeLevel > 0;
  if (!safeOn) return;
  const limits: { maxOnS?: number; maxStartsPerHour?: number } = actuator;
  for (const field of ['maxOnS', 'maxStartsPerHour'] as const) {
    if (limits[field] !== undefined) {
      issue([...path, field], `needs a safe state of off: ${field} limits the time an actuator is on`);
    }
  }
}

/** A loop's safety monitors: limits that can trip, and the defaults a generic loop lacks. */
function checkLoopMonitors(loop: RawLoop, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const { cutoff } = loop;
  if (cutoff) {
    if (cutoff.min === undefined && cutoff.max === undefined) issue(['cutoff'], 'give max, min or both');
    const plausible = loop.plausible ?? DEFAULTS[loop.quantity].plausible;
    const tripsInside = 'a setpoint there would trip it';
    if (cutoff.max !== undefined) {
      const path = ['cutoff', 'max'];
      if (loop.raise === undefined) issue(path, 'needs a raise actuator (nothing else pushes the value up)');
      if (cutoff.max <= loop.limits.max)
        issue(path, `must lie above limits.max (${loop.limits.max}): ${tripsInside}`);
      if (cutoff.max >= plausible.max) {
        issue(path, `must lie below plausible.max (${plausible.max}): readings above are sensor faults`);
      }
    }
    if (cutoff.min !== undefined) {
      const path = ['cutoff', 'min'];
      if (loop.lower === undefined)
        issue(path, 'needs a lower actuator (nothing else pushes the value down)');
      if (cutoff.min >= loop.limits.min)
        issue(path, `must lie below limits.min (${loop.limits.min}): ${tripsInside}`);
      if (cutoff.min <= plausible.min) {
        issue(path, `must lie above plausible.min (${plausible.min}): readings below are sensor faults`);
      }
    }
  }
  if (loop.quantity === 'generic') {
    if (loop.stuckWatch && loop.stuckWatch.minChange === undefined) {
      issue(['stuckWatch', 'minChange'], 'required for a generic loop (no default unit)');
    }
    if (loop.runawayWatch && loop.runawayWatch.band === undefined) {
      issue(['runawayWatch', 'band'], 'required for a generic loop (no default unit)');
    }
  }
}

/** An MQTT relay's own fields over its preset's; keys neither gives are absent. */
function switchPayloads(raw: RawMqttSwitch): Partial<SwitchPayloads> {
  const preset =
    raw.preset !== undefined && raw.device !== undefined ? switchPreset(raw.preset, raw.device) : {};
  const own = {
    commandTopic: raw.commandTopic,
    stateTopic: raw.stateTopic,
    payloadOn: raw.payloadOn,
    payloadOff: raw.payloadOff,
    stateOn: raw.stateOn,
    stateOff: raw.stateOff,
    stateField: raw.stateField,
  };
  const merged: Partial<SwitchPayloads> = { ...preset };
  for (const [key, value] of Object.entries(own) as [keyof SwitchPayloads, string | undefined][]) {
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

const REQUIRED_SWITCH_KEYS = [
  'commandTopic',
  'stateTopic',
  'payloadOn',
  'payloadOff',
  'stateOn',
  'stateOff',
] as const satisfies readonly (keyof SwitchPayloads)[];

/** An MQTT relay's own rules: preset with device, every payload known, absolute and distinct commands. */
function checkMqttSwitch(raw: RawMqttSwitch, ctx: z.RefinementCtx): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (raw.preset !== undefined && raw.device === undefined) {
    issue(['device'], `required with preset ${raw.preset}`);
    return; // every topic and payload would be missing too: one message says it
  }
  if (raw.device !== undefined && raw.preset === undefined) {
    issue(['preset'], 'required with device (tasmota or zigbee2mqtt), or give the topics instead');
  }
  const payloads = switchPayloads(raw);
  for (const key of REQUIRED_SWITCH_KEYS) {
    if (payloads[key] === undefined) issue([key], 'required (or a preset and device)');
  }
  for (const key of ['payloadOn', 'payloadOff'] as const) {
    // A toggle undoes itself when repeated, and the core repeats commands (retry, keep-alive).
    if (payloads[key] !== undefined && /toggle/i.test(payloads[key])) {
      issue([key], 'must be an absolute command (ON/OFF), never a toggle');
    }
  }
  if (payloads.payloadOn !== undefined && payloads.payloadOn === payloads.payloadOff) {
    issue(['payloadOff'], 'must differ from payloadOn');
  }
  const same = (a?: string, b?: string) =>
    a !== undefined && a.trim().toLowerCase() === b?.trim().toLowerCase();
  if (same(payloads.stateOn, payloads.stateOff)) issue(['stateOff'], 'must differ from stateOn');
  checkDeadMan(raw, payloads, issue);
}

/** The keep-alive (ON re-sent this often while wanted) plus slack for a late cycle, s. */
export const MIN_DEAD_MAN_S = LOOP_POLICY.keepAliveMs / 1000 + 60;
/** deadManS with preset tasmota when not given (and possible), s. */
export const DEFAULT_TASMOTA_DEAD_MAN_S = 600;

/** An explicit deadManS must outlast the keep-alive and fit the device's mechanism. */
function checkDeadMan(
  raw: RawMqttSwitch,
  payloads: Partial<SwitchPayloads>,
  issue: (path: string[], message: string) => void,
): void {
  const seconds = raw.deadManS;
  if (seconds === undefined || seconds === 0) return;
  if (raw.preset === undefined) {
    issue(
      ['deadManS'],
      'needs preset tasmota (PulseTime) or zigbee2mqtt (on_time); for other devices set their own ' +
        'auto-off timer, or use 0',
    );
    return;
  }
  if (seconds < MIN_DEAD_MAN_S) {
    issue(
      ['deadManS'],
      `must be at least ${MIN_DEAD_MAN_S} s (got ${seconds}): homeostat re-sends ON every ` +
        `${LOOP_POLICY.keepAliveMs / 1000} s while the plug should stay on, and the plug must not time ` +
        `out between two of them; ${DEFAULT_TASMOTA_DEAD_MAN_S} is a good value`,
    );
  }
  const max = DEAD_MAN_MAX_S[raw.preset];
  if (seconds > max) {
    issue(['deadManS'], `must be at most ${max} s with preset ${raw.preset} (got ${seconds})`);
  }
  if (raw.safeState === 'on') {
    issue(
      ['deadManS'],
      'turns the plug off when homeostat goes silent, but safeState is on: use deadManS: 0',
    );
  }
  if (seconds <= max && payloads.commandTopic !== undefined && payloads.payloadOn !== undefined) {
    const built = deadManFor(
      raw.preset,
      { commandTopic: payloads.commandTopic, payloadOn: payloads.payloadOn },
      seconds,
    );
    if (!built.ok) issue(['deadManS'], built.problem);
  }
}

/** deadManS as given, else the preset's default where its mechanism can be built. */
function resolveDeadManS(raw: RawMqttSwitch, payloads: Partial<SwitchPayloads>): number {
  if (raw.deadManS !== undefined) return raw.deadManS;
  if (raw.preset !== 'tasmota' || raw.safeState === 'on' || payloads.commandTopic === undefined) return 0;
  const built = deadManFor(
    'tasmota',
    { commandTopic: payloads.commandTopic, payloadOn: payloads.payloadOn ?? '' },
    DEFAULT_TASMOTA_DEAD_MAN_S,
  );
  return built.ok ? DEFAULT_TASMOTA_DEAD_MAN_S : 0;
}

/** The simulated plant a sensor reads, if any. */
function sensorPlant(sensor: z.output<typeof sensorSchema>): string | undefined {
  return sensor.kind === 'simulated' ? sensor.plant : undefined;
}

/** The simulated plant an actuator drives and its gain, if any. */
function actuatorPlant(actuator: RawActuator): { plant: string; gain: number } | undefined {
  return actuator.kind === 'simulated_relay' || actuator.kind === 'simulated_continuous'
    ? { plant: actuator.plant, gain: actuator.gain }
    : undefined;
}

/** Rules that span sections: every id refers to something, no actuator is shared, gains push the right way. */
function checkReferences(config: RawConfig, ctx: z.RefinementCtx): void {
  const plants = config.simulation.plants;
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });

  for (const [id, sensor] of Object.entries(config.sensors)) {
    const plant = sensorPlant(sensor);
    if (plant !== undefined && !Object.hasOwn(plants, plant)) {
      issue(['sensors', id, 'plant'], `unknown plant "${plant}"`);
    }
    if (usesMqtt(sensor) && !config.mqtt)
      issue(['sensors', id], `kind ${sensor.kind} needs the mqtt block (broker)`);
  }
  /** command topic → the actuator publishing on it: two would fight over one device. */
  const commandTopics = new Map<string, string>();
  for (const [id, actuator] of Object.entries(config.actuators)) {
    const driven = actuatorPlant(actuator);
    if (driven && !Object.hasOwn(plants, driven.plant)) {
      issue(['actuators', id, 'plant'], `unknown plant "${driven.plant}"`);
    }
    checkSafetyLimits(actuator, ['actuators', id], issue);
    if (!usesMqtt(actuator)) continue;
    if (!config.mqtt) issue(['actuators', id], `kind ${actuator.kind} needs the mqtt block (broker)`);
    const topic =
      actuator.kind === 'mqtt_switch'
        ? switchPayloads(actuator).commandTopic
        : actuator.kind === 'mqtt_level'
          ? actuator.commandTopic
          : undefined;
    const other = topic === undefined ? undefined : commandTopics.get(topic);
    if (topic !== undefined && other !== undefined) {
      issue(['actuators', id], `command topic ${topic} is already actuators.${other}'s`);
    } else if (topic !== undefined) {
      commandTopics.set(topic, id);
    }
  }

  checkGpioPins(config, issue);

  /** actuator id → where it is already used, e.g. `loops.room.raise`. */
  const usedBy = new Map<string, { loop: string; role: 'raise' | 'lower' }>();
  for (const [loopId, loop] of Object.entries(config.loops)) {
    const sensor = Object.hasOwn(config.sensors, loop.sensor) ? config.sensors[loop.sensor] : undefined;
    if (!sensor) issue(['loops', loopId, 'sensor'], `unknown sensor "${loop.sensor}"`);
    loop.interlocks.forEach((interlock, index) => {
      if (!Object.hasOwn(config.sensors, interlock.sensor)) {
        issue(['loops', loopId, 'interlocks', index, 'sensor'], `unknown sensor "${interlock.sensor}"`);
      }
    });
    const measuredPlant = sensor ? sensorPlant(sensor) : undefined;

    for (const role of ['raise', 'lower'] as const) {
      const actuatorId = loop[role];
      if (actuatorId === undefined) continue;
      const path = ['loops', loopId, role];
      const actuator = Object.hasOwn(config.actuators, actuatorId) ? config.actuators[actuatorId] : undefined;
      if (!actuator) {
        issue(path, `unknown actuator "${actuatorId}"`);
        continue;
      }
      const previous = usedBy.get(actuatorId);
      if (previous?.loop === loopId) {
        issue(path, `actuator "${actuatorId}" is already this loop's ${previous.role} actuator`);
      } else if (previous) {
        issue(path, `actuator "${actuatorId}" is already used by loops.${previous.loop}.${previous.role}`);
      } else {
        usedBy.set(actuatorId, { loop: loopId, role });
      }

      checkModulation(actuatorId, actuator, loopId, loop.controller, issue);
      const driven = actuatorPlant(actuator);
      if (!driven) continue;
      // A raise actuator that lowers the plant would drive the loop away from its setpoint forever.
      const wrongWay = role === 'raise' ? !(driven.gain > 0) : !(driven.gain < 0);
      if (wrongWay) {
        issue(
          path,
          `actuator "${actuatorId}" has gain ${driven.gain} on plant "${driven.plant}"; ` +
            `a ${role} actuator needs a ${role === 'raise' ? 'positive' : 'negative'} gain`,
        );
      }
      if (measuredPlant !== undefined && driven.plant !== measuredPlant) {
        issue(
          path,
          `actuator "${actuatorId}" drives plant "${driven.plant}" but sensor "${loop.sensor}" reads plant "${measuredPlant}"`,
        );
      }
    }
  }
}

/** A pin driven or read by two drivers would fight (a relay exported as an input, two counters). */
function checkGpioPins(config: RawConfig, issue: (path: (string | number)[], message: string) => void): void {
  /** BCM number → its first user, e.g. `sensors.window`. */
  const users = new Map<number, string>();
  for (const section of ['sensors', 'actuators'] as const) {
    for (const [id, item] of Object.entries(config[section])) {
      const pin = gpioPinOf(item);
      if (pin === undefined) continue;
      const other = users.get(pin);
      if (other !== undefined) issue([section, id, 'bcm'], `pin ${pin} is also used by ${other}`);
      else users.set(pin, `${section}.${id}`);
    }
  }
}

/**
 * A relay's band modulation needs the loop's PID: the band is a band of the PID output, kp
 * turns bandC into it, and it must stay inside 0..1 (kp·bandC < 0.5).
 */
function checkModulation(
  actuatorId: string,
  actuator: RawActuator,
  loopId: string,
  controller: RawLoop['controller'],
  issue: (path: (string | number)[], message: string) => void,
): void {
  if (!isRelay(actuator) || actuator.modulation !== 'band') return;
  if (controller.type !== 'pid') {
    issue(
      ['actuators', actuatorId, 'modulation'],
      `modulation "band" needs a pid controller, but loops.${loopId} uses ${controller.type} ` +
        '(use modulation "window" or a pid controller)',
    );
    return;
  }
  const halfBand = controller.kp * actuator.bandC;
  if (halfBand >= 0.5) {
    issue(
      ['actuators', actuatorId, 'bandC'],
      `band too wide for kp: kp ${controller.kp} × bandC ${actuator.bandC} = ${round(halfBand)} ` +
        `(must be < 0.5, so bandC < ${round(0.5 / controller.kp)} for loops.${loopId})`,
    );
  }
}

/** Relay kinds: they share `relayFields` (timing, modulation, safe state). */
export function isRelay<A extends { kind: string }>(
  actuator: A,
): actuator is Extract<A, { kind: 'simulated_relay' | 'mqtt_switch' | 'gpio_relay' }> {
  return (
    actuator.kind === 'simulated_relay' || actuator.kind === 'mqtt_switch' || actuator.kind === 'gpio_relay'
  );
}

/** The BCM GPIO pin a sensor or actuator uses, if any (the 1-Wire pin is the kernel's, not listed). */
export function gpioPinOf(section: { kind: string; bcm?: number }): number | undefined {
  return section.kind === 'gpio_input' || section.kind === 'pulse_rate' || section.kind === 'gpio_relay'
    ? section.bcm
    : undefined;
}

/** Kinds that talk to a broker: they need the mqtt block, and are never simulated. */
export function usesMqtt(section: { kind: string }): boolean {
  return section.kind === 'mqtt' || section.kind === 'mqtt_switch' || section.kind === 'mqtt_level';
}

/** For messages: at most 4 significant digits, no float noise. */
function round(value: number): number {
  return Number(value.toPrecision(4));
}

// ---------------------------------------------------------------------------------------
// Resolution of defaults that depend on other fields

const DEFAULTS: Record<Quantity, { unit: string; step: number; plausible: Range }> = {
  temperature: { unit: '°C', step: 0.5, plausible: { min: -55, max: 125 } },
  humidity: { unit: '%', step: 1, plausible: { min: 0, max: 100 } },
  // A generic quantity has no natural range: no plausibility check unless configured.
  generic: {
    unit: '',
    step: 0.5,
    plausible: { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY },
  },
};

function resolveController(controller: RawLoop['controller']): ControllerConfig {
  if (controller.type !== 'pid') return controller;
  return {
    ...controller,
    derivativeFilterS: controller.derivativeFilterS ?? defaultDerivativeFilterS(controller.tdS),
  };
}

function resolveActuator(actuator: RawActuator): ActuatorConfig {
  if (actuator.kind !== 'mqtt_switch') return actuator;
  // checkMqttSwitch guarantees every required key; the fallbacks only keep types honest.
  const payloads = switchPayloads(actuator);
  return {
    ...actuator,
    ...payloads,
    commandTopic: payloads.commandTopic ?? '',
    stateTopic: payloads.stateTopic ?? '',
    payloadOn: payloads.payloadOn ?? '',
    payloadOff: payloads.payloadOff ?? '',
    stateOn: payloads.stateOn ?? '',
    stateOff: payloads.stateOff ?? '',
    deadManS: resolveDeadManS(actuator, payloads),
  };
}

function resolve(raw: RawConfig): Config {
  const sensors = mapValues(raw.sensors, (s) => ({ ...s, staleAfterS: s.staleAfterS ?? 3 * s.periodS }));
  const loops = mapValues(raw.loops, (loop, id): LoopConfig => {
    const defaults = DEFAULTS[loop.quantity];
    return {
      ...loop,
      name: loop.name ?? id,
      unit: loop.unit ?? defaults.unit,
      mode: loop.mode ?? defaultMode(loop),
      step: loop.step ?? defaults.step,
      // checkReferences guarantees the sensor exists; the fallback only keeps types honest.
      staleAfterS: loop.staleAfterS ?? sensors[loop.sensor]?.staleAfterS ?? 30,
      plausible: loop.plausible ?? { ...defaults.plausible },
      controller: resolveController(loop.controller),
    };
  });
  return {
    ...raw,
    node: { id: raw.node.id, name: raw.node.name ?? raw.node.id },
    simulation: {
      seed: raw.simulation.seed,
      plants: mapValues(raw.simulation.plants, (p) => ({ ...p, initial: p.initial ?? p.ambient })),
    },
    sensors,
    actuators: mapValues(raw.actuators, resolveActuator),
    loops,
  };
}

function mapValues<A, B>(record: Record<string, A>, fn: (value: A, key: string) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value, key)]));
}
