/**
 * The switch protocols of the device families people run (Tasmota, Zigbee2MQTT, Shelly Gen2/Gen3,
 * ESPHome) and their device-side dead man's switches, as pure functions: the kinds resolve a
 * preset into topics and payloads once, the driver sends them. No IO here.
 */
import { isRecord, preview } from './payload.js';

/** Topics and payloads of an MQTT relay. */
export interface SwitchPayloads {
  commandTopic: string;
  stateTopic: string;
  payloadOn: string;
  payloadOff: string;
  stateOn: string;
  stateOff: string;
  stateField?: string;
  /**
   * Where the device answers commands (Shelly: `<src>/rpc`); an answer to the ON or OFF frame
   * is a state report too (see shellyReplyLevel). Absent: the state topic alone.
   */
  replyTopic?: string;
}

/** Device families with a known switch protocol. */
export const SWITCH_PRESET_NAMES = ['tasmota', 'zigbee2mqtt', 'shelly', 'esphome'] as const;
export type SwitchPreset = (typeof SWITCH_PRESET_NAMES)[number];

/** Which of a device's outputs a preset addresses, where the family has several. */
export interface SwitchTarget {
  /** shelly: the Switch component's id (`switch:<id>`, 0 for the first relay). Default 0. */
  switchId?: number | undefined;
  /** esphome: the switch's object id (`relay` for `<prefix>/switch/relay/…`). Required for esphome. */
  entity?: string | undefined;
}

/**
 * The start of the `src` of homeostat's Shelly RPC requests: `homeostat-rpc/<device>`. A Shelly
 * answers on `<src>/rpc` (shelly-api-docs.shelly.cloud, gen2/General/RPCChannels, MQTT), so each
 * device's answers come on a topic of their own, out of homeostat's tree (`homeostat/<node>/…`).
 * The broker's ACL must let the device publish to `homeostat-rpc/<device>/rpc`.
 */
export const SHELLY_RPC_SRC = 'homeostat-rpc';

/** The `src` of the requests to one device; its answers come on `<src>/rpc`. */
export function shellyRpcSrc(device: string): string {
  return `${SHELLY_RPC_SRC}/${device}`;
}

/**
 * The frame id of a Switch.Set to switch `switchId` on or off: `switch:0:on`. RPC ids may be
 * strings (gen2/General/RPCProtocol) and the answer carries the request's id, so an answer says
 * which switch took which command.
 */
function shellyFrameId(switchId: number, on: boolean): string {
  return `switch:${switchId}:${on ? 'on' : 'off'}`;
}

/**
 * A Shelly Gen2/Gen3 `Switch.Set` request frame (shelly-api-docs.shelly.cloud,
 * gen2/ComponentsAndServices/Switch: `id` of the Switch, `on` true/false, optional
 * `toggle_after` s; gen2/General/RPCProtocol: a request has `id`, `src`, `method`, `params`).
 */
export function shellySwitchSet(switchId: number, on: boolean, src: string, toggleAfterS?: number): string {
  const params =
    toggleAfterS === undefined ? { id: switchId, on } : { id: switchId, on, toggle_after: toggleAfterS };
  return JSON.stringify({ id: shellyFrameId(switchId, on), src, method: 'Switch.Set', params });
}

/**
 * The relay's state from a Shelly's answer on the reply topic: a `result` (no `error`) to our
 * ON frame is 1, to our OFF frame 0 — the Switch did what it was told, now. A Shelly publishes
 * `status/switch:<n>` only on a change, so without this a heater kept off goes unknown when
 * its state turns stale, and a re-sent OFF (keep-alive) would get no word back. Undefined for
 * anything else (an error, another frame, garbage).
 */
export function shellyReplyLevel(
  payload: string,
  payloads: Pick<SwitchPayloads, 'payloadOn' | 'payloadOff'>,
): 0 | 1 | undefined {
  const reply = parseJsonRecord(payload);
  if (reply === undefined || !isRecord(reply.result) || reply.error !== undefined) return undefined;
  if (reply.id === undefined) return undefined;
  if (reply.id === parseJsonRecord(payloads.payloadOn)?.id) return 1;
  if (reply.id === parseJsonRecord(payloads.payloadOff)?.id) return 0;
  return undefined;
}

function parseJsonRecord(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The topics and payloads of a preset for one device:
 * - `tasmota`, device = the device's Topic (`plug`): `cmnd/plug/POWER` `ON`/`OFF`, state on
 *   `stat/plug/POWER` `ON`/`OFF` (Tasmota's default FullTopic `%prefix%/%topic%/`);
 * - `zigbee2mqtt`, device = the device's topic with the base (`zigbee2mqtt/heater_plug`):
 *   `<device>/set` `{"state":"ON"}`, state in the field `state` of `<device>`;
 * - `shelly` (Gen2/Gen3), device = the topic prefix (`shellyplus1-a8032ab12345`, its id by
 *   default): a `Switch.Set` RPC on `<device>/rpc`, state in the field `output` (true/false) of
 *   `<device>/status/switch:<switchId>`, which the device publishes only with "Generic status
 *   update over MQTT" (`status_ntf`) on (gen2/ComponentsAndServices/Mqtt), and in its answers
 *   on `homeostat-rpc/<device>/rpc` (shellyReplyLevel);
 * - `esphome`, device = the node's topic prefix (its name by default), entity = the switch's
 *   object id: `<device>/switch/<entity>/command` `ON`/`OFF`, state `ON`/`OFF` on
 *   `<device>/switch/<entity>/state` (esphome.io, components/mqtt, "MQTT Component Base Configuration").
 * Absolute commands only: a toggle would make a repeated command undo itself.
 */
export function switchPreset(
  preset: SwitchPreset,
  device: string,
  target: SwitchTarget = {},
): SwitchPayloads {
  switch (preset) {
    case 'tasmota':
      return {
        commandTopic: `cmnd/${device}/POWER`,
        stateTopic: `stat/${device}/POWER`,
        ...ON_OFF,
      };
    case 'zigbee2mqtt':
      return {
        ...ON_OFF,
        commandTopic: `${device}/set`,
        stateTopic: device,
        payloadOn: JSON.stringify({ state: 'ON' }),
        payloadOff: JSON.stringify({ state: 'OFF' }),
        stateField: 'state',
      };
    case 'shelly': {
      const switchId = target.switchId ?? 0;
      const src = shellyRpcSrc(device);
      return {
        commandTopic: `${device}/rpc`,
        stateTopic: `${device}/status/switch:${switchId}`,
        replyTopic: `${src}/rpc`,
        payloadOn: shellySwitchSet(switchId, true, src),
        payloadOff: shellySwitchSet(switchId, false, src),
        stateOn: 'true',
        stateOff: 'false',
        stateField: 'output',
      };
    }
    case 'esphome': {
      const base = `${device}/switch/${target.entity ?? ''}`;
      return { commandTopic: `${base}/command`, stateTopic: `${base}/state`, ...ON_OFF };
    }
  }
}

const ON_OFF = { payloadOn: 'ON', payloadOff: 'OFF', stateOn: 'ON', stateOff: 'OFF' } as const;

/**
 * A device-side dead man's switch: the plug turns itself off a set time after the last ON
 * unless it is commanded ON again, so a plug left ON by a homeostat that died, hangs or lost
 * the broker switches off on its own. homeostat re-sends ON while it wants it on (keep-alive),
 * which restarts the device's countdown.
 * - `tasmota-pulsetime`: Tasmota's PulseTime<n> (stored on the device), sent to `topic` when
 *   the driver starts and before every ON; Tasmota restarts the countdown on every ON.
 * - `zigbee2mqtt-on-time`: `payloadOn` carries `on_time` (seconds): Zigbee2MQTT sends the
 *   On With Timed Off command of the OnOff cluster, whose timer a new one restarts (ZCL: the
 *   on time becomes the larger of the remaining and the new one). Only devices that implement
 *   that command have it.
 * - `shelly-toggle-after`: `payloadOn` is a `Switch.Set` with `toggle_after` (seconds), the
 *   Switch's "flip-back timer" (gen2/ComponentsAndServices/Switch); every Set starts it afresh
 *   (the status' `timer_started_at` moves). Only the ON carries it: an OFF with a flip-back
 *   timer would switch the heater back on.
 */
export type DeadMan =
  | { kind: 'tasmota-pulsetime'; seconds: number; topic: string; payload: string }
  | { kind: 'zigbee2mqtt-on-time'; seconds: number; payloadOn: string }
  | { kind: 'shelly-toggle-after'; seconds: number; payloadOn: string };

/**
 * Longest dead man's time each mechanism can hold, s: PulseTime 64900 − 100; ZCL on time is
 * 0.1 s × uint16; Shelly documents no bound for toggle_after, homeostat takes up to a day.
 * ESPHome has no timer it can set over MQTT (0: none).
 */
export const DEAD_MAN_MAX_S: Readonly<Record<SwitchPreset, number>> = {
  tasmota: 64_800,
  zigbee2mqtt: 6_553,
  shelly: 86_400,
  esphome: 0,
};

/**
 * Tasmota's PulseTime value for a time in seconds: 1–111 are tenths of a second (0.1–11.1 s),
 * 112–64900 are seconds + 100 (12 s – 18 h). RangeError outside 0.1 s – 64800 s.
 */
export function tasmotaPulseTimeValue(seconds: number): number {
  if (seconds >= 12 && seconds <= DEAD_MAN_MAX_S.tasmota) return Math.round(seconds) + 100;
  if (seconds >= 0.1 && seconds <= 11.1) return Math.round(seconds * 10);
  throw new RangeError(`Tasmota PulseTime holds 0.1–11.1 s or 12–64800 s, got ${seconds} s`);
}

/** The relay a Tasmota POWER command topic switches: `…/POWER` is 1, `…/POWER3` is 3; else undefined. */
export function tasmotaRelayIndex(commandTopic: string): number | undefined {
  const match = /\/power(\d*)$/i.exec(commandTopic);
  if (!match) return undefined;
  const index = match[1] === '' ? 1 : Number(match[1]);
  // Tasmota has 32 pulse timers (8 before 12.x); POWER0 means all relays.
  return index >= 1 && index <= 32 ? index : undefined;
}

type Built = { ok: true; deadMan: DeadMan } | { ok: false; problem: string };

/**
 * The dead man's switch of a preset for a switch's payloads, or why it cannot be built (whole
 * `seconds` within 1..DEAD_MAN_MAX_S[preset]; the schema checks the margin over the keep-alive).
 */
export function deadManFor(
  preset: SwitchPreset,
  payloads: Pick<SwitchPayloads, 'commandTopic' | 'payloadOn'>,
  seconds: number,
): Built {
  if (preset === 'esphome') {
    return { ok: false, problem: 'is not available with preset esphome (no off timer settable over MQTT)' };
  }
  if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= DEAD_MAN_MAX_S[preset])) {
    return {
      ok: false,
      problem: `must be whole seconds within 1..${DEAD_MAN_MAX_S[preset]} with preset ${preset}`,
    };
  }
  switch (preset) {
    case 'tasmota':
      return tasmotaDeadMan(payloads.commandTopic, seconds);
    case 'zigbee2mqtt':
      return withJsonOn(payloads.payloadOn, 'a JSON object such as {"state":"ON"}', (on) => ({
        kind: 'zigbee2mqtt-on-time',
        seconds,
        payloadOn: JSON.stringify({ ...on, on_time: seconds }),
      }));
    case 'shelly':
      return withJsonOn(payloads.payloadOn, 'a JSON Switch.Set request with params', (on) =>
        isRecord(on.params) && on.method === 'Switch.Set'
          ? {
              kind: 'shelly-toggle-after',
              seconds,
              payloadOn: JSON.stringify({ ...on, params: { ...on.params, toggle_after: seconds } }),
            }
          : undefined,
      );
  }
}

function tasmotaDeadMan(commandTopic: string, seconds: number): Built {
  const index = tasmotaRelayIndex(commandTopic);
  if (index === undefined) {
    return {
      ok: false,
      problem: `needs a command topic ending in /POWER or /POWER<n> (the relay PulseTime<n> times), got ${commandTopic}`,
    };
  }
  const prefix = commandTopic.slice(0, commandTopic.lastIndexOf('/') + 1);
  return {
    ok: true,
    deadMan: {
      kind: 'tasmota-pulsetime',
      seconds,
      topic: `${prefix}PulseTime${index}`,
      payload: String(tasmotaPulseTimeValue(seconds)),
    },
  };
}

/** A dead man's switch built from a JSON payloadOn, or why payloadOn is not what it needs. */
function withJsonOn(
  payloadOn: string,
  expected: string,
  build: (on: Record<string, unknown>) => DeadMan | undefined,
): Built {
  let on: unknown;
  try {
    on = JSON.parse(payloadOn);
  } catch {
    on = undefined;
  }
  const deadMan = isRecord(on) ? build(on) : undefined;
  return deadMan
    ? { ok: true, deadMan }
    : { ok: false, problem: `needs payloadOn to be ${expected}, got ${preview(payloadOn)}` };
}

/** Device families with a known level (continuous output) protocol. */
export const LEVEL_PRESET_NAMES = ['esphome'] as const;
export type LevelPreset = (typeof LEVEL_PRESET_NAMES)[number];

/**
 * The topics of a level preset: `esphome`, device = the node's topic prefix, entity = a
 * `number` component's object id (a template number whose set_action drives an output, a
 * fan speed or a light): `<device>/number/<entity>/command` takes the plain number (parsed as
 * a float), `<device>/number/<entity>/state` reports it with the number's accuracy (`42` or
 * `42.0`) (esphome/esphome, components/mqtt/mqtt_number.cpp). The number's min/max must be
 * 0..levelScale.
 */
export function levelPreset(
  preset: LevelPreset,
  device: string,
  entity: string,
): { commandTopic: string; stateTopic: string } {
  switch (preset) {
    case 'esphome':
      return {
        commandTopic: `${device}/number/${entity}/command`,
        stateTopic: `${device}/number/${entity}/state`,
      };
  }
}
