/**
 * On/off out of what MQTT devices publish for a contact, a motion or a leak sensor, as pure
 * functions, and the presets of the families people run. The value the loop sees is 1 for
 * "tripped-ish" (open, occupied, wet, the input on) and 0 for the rest, as a gpio_input reads
 * 1 for an open window: `pauseWhen: 1` reads the same for both.
 *
 * What each family publishes (the tests replay exactly these):
 * - Zigbee2MQTT: the device's whole state as JSON on `<base>/<device>`, the input a boolean
 *   property. `contact` is true when CLOSED, false when open ("Indicates if the contact is
 *   closed (= true) or open (= false)", zigbee2mqtt.io devices/MCCGQ11LM.html, Aqara
 *   MCCGQ11LM: `{"battery":97,"contact":true,"linkquality":72,...}`), so its preset reads
 *   false as 1; `occupancy` (motion) and `water_leak` are true when tripped.
 * - Tasmota: a switch detached from the relays reports `{"Switch1":{"Action":"ON"}}` on
 *   `stat/<topic>/RESULT` at each change (SetOption114 1), and `"Switch1":"ON"` in
 *   `tele/<topic>/SENSOR` (SwitchMode 15 at each change; also every TelePeriod)
 *   (tasmota.github.io/docs/Buttons-and-Switches). Both topics are read.
 * - Shelly Gen2/Gen3: the Input component's status `{"id":0,"state":true}` on
 *   `<prefix>/status/input:0` with "Generic status update over MQTT" enabled
 *   (shelly-api-docs.shelly.cloud gen2/Components/FunctionalComponents/Input); true = the
 *   input is on (its contact closed: invert for a reed that closes when the window does).
 * - ESPHome: `ON` / `OFF` on `<prefix>/binary_sensor/<object_id>/state`
 *   (esphome mqtt_binary_sensor.cpp: `state ? "ON" : "OFF"`); a door's ON is open.
 */
import { MAX_PAYLOAD_BYTES, type Parsed, readField } from './payload.js';

/** A state word a mapping lists: compared as text, ignoring case (`true` = JSON true = "TRUE"). */
export type BinaryWord = string | number | boolean;

/** Where a state sits and which words mean 1 (`on`) and 0 (`off`). */
export interface BinaryFormat {
  /** Dot path of the state in a JSON payload; absent: the whole payload is the state. */
  field?: string | undefined;
  on: readonly BinaryWord[];
  off: readonly BinaryWord[];
}

/** The words understood when a sensor gives no mapping: booleans, ON/OFF, open/closed, 1/0. */
export const DEFAULT_ON: readonly BinaryWord[] = [true, 'ON', 'open', 1];
export const DEFAULT_OFF: readonly BinaryWord[] = [false, 'OFF', 'closed', 0];

/** How a word compares: its text, trimmed, lower case. */
function normalised(word: BinaryWord): string {
  return String(word).trim().toLowerCase();
}

/**
 * The state (1 or 0) in a payload. `missing`: the payload has no such field (a Tasmota RESULT
 * about something else), which the driver ignores; anything else that is not one of the
 * mapping's words is garbage, with a reason saying what was sent.
 */
export function parseBinaryPayload(payload: Buffer, format: BinaryFormat): Parsed<0 | 1> {
  if (payload.length > MAX_PAYLOAD_BYTES) {
    return garbage(`payload of ${payload.length} bytes is too large (limit ${MAX_PAYLOAD_BYTES})`);
  }
  let raw: unknown;
  let what: string;
  if (format.field === undefined) {
    raw = payload.toString('utf8');
    what = 'payload';
  } else {
    const found = readField(payload, format.field);
    if (!found.ok) return found;
    raw = found.value;
    what = `field ${format.field}`;
  }
  if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') {
    const word = normalised(raw);
    if (format.on.some((on) => normalised(on) === word)) return { ok: true, value: 1 };
    if (format.off.some((off) => normalised(off) === word)) return { ok: true, value: 0 };
  }
  return garbage(
    `${what} is ${preview(raw)}, neither on (${wordList(format.on)}) nor off (${wordList(format.off)})`,
  );
}

/** The device families whose binary inputs homeostat knows. */
export const BINARY_PRESET_NAMES = ['zigbee2mqtt', 'tasmota', 'shelly', 'esphome'] as const;
export type BinaryPreset = (typeof BINARY_PRESET_NAMES)[number];

/** One topic a binary sensor reads, and where its state sits there. */
export interface BinarySource {
  topic: string;
  field?: string | undefined;
}

/** The topics and mapping of a preset. */
export interface BinaryPresetPayloads {
  sources: BinarySource[];
  on: readonly BinaryWord[];
  off: readonly BinaryWord[];
}

/** Zigbee2MQTT properties whose true means "not tripped": a contact is true when closed. */
const ZIGBEE_TRUE_IS_OFF = new Set(['contact']);

/**
 * The sources and mapping of `preset` for one input of `device` (as the availability presets
 * name devices: Zigbee2MQTT the device's topic with the base, Tasmota its Topic, Shelly and
 * ESPHome their topic prefix). `input`: Zigbee2MQTT the property (contact, occupancy,
 * water_leak…), Tasmota the switch number, Shelly the input id, ESPHome the binary sensor's
 * object id. RangeError when the input does not fit the family (the schema checks it first).
 */
export function binaryPreset(
  preset: BinaryPreset,
  device: string,
  input: string | number,
): BinaryPresetPayloads {
  switch (preset) {
    case 'zigbee2mqtt': {
      const property = String(input);
      const trueIsOff = ZIGBEE_TRUE_IS_OFF.has(property);
      return {
        sources: [{ topic: device, field: property }],
        on: [!trueIsOff],
        off: [trueIsOff],
      };
    }
    case 'tasmota': {
      const name = `Switch${wholeNumber(preset, input, 1)}`;
      return {
        sources: [
          { topic: `stat/${device}/RESULT`, field: `${name}.Action` },
          { topic: `tele/${device}/SENSOR`, field: name },
        ],
        on: ['ON'],
        off: ['OFF'],
      };
    }
    case 'shelly':
      return {
        sources: [{ topic: `${device}/status/input:${wholeNumber(preset, input, 0)}`, field: 'state' }],
        on: [true],
        off: [false],
      };
    case 'esphome':
      return { sources: [{ topic: `${device}/binary_sensor/${input}/state` }], on: ['ON'], off: ['OFF'] };
  }
}

/** The input a preset takes when the file gives none; undefined where one is required (ESPHome). */
export function defaultBinaryInput(preset: BinaryPreset): string | number | undefined {
  return { zigbee2mqtt: 'contact', tasmota: 1, shelly: 0, esphome: undefined }[preset];
}

function wholeNumber(preset: BinaryPreset, input: string | number, min: number): number {
  const number = typeof input === 'number' ? input : Number(input);
  if (!Number.isInteger(number) || number < min) {
    throw new RangeError(
      `preset ${preset}: input must be a whole number >= ${min}, got ${JSON.stringify(input)}`,
    );
  }
  return number;
}

function wordList(words: readonly BinaryWord[]): string {
  return words.map((word) => String(word)).join(', ');
}

/** A value as a reason shows it: text quoted, anything else as JSON; at most 40 characters. */
function preview(value: unknown): string {
  const cut = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
  if (typeof value === 'string') return JSON.stringify(cut(value));
  return cut(JSON.stringify(value) ?? String(value));
}

function garbage(reason: string): Parsed<never> {
  return { ok: false, missing: false, reason };
}
