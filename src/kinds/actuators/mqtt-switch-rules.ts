/**
 * An MQTT relay's payloads: a preset's topics and payloads under the section's own fields, the
 * rules they must follow (absolute, distinct commands) and its dead man's switch (checked, and
 * defaulted for Tasmota plugs).
 */
import type { z } from 'zod';
import { availabilityTopic } from '../../drivers/mqtt/availability.js';
import {
  DEAD_MAN_MAX_S,
  type DeadMan,
  deadManFor,
  type SwitchPayloads,
  type SwitchPreset,
  switchPreset,
} from '../../drivers/mqtt/switch-presets.js';
import { LOOP_POLICY } from '../loop-policy.js';

/** The fields of a parsed (unresolved) mqtt_switch section these rules read. */
export interface RawSwitch extends Partial<SwitchPayloads> {
  preset?: SwitchPreset | undefined;
  device?: string | undefined;
  switchId?: number | undefined;
  entity?: string | undefined;
  availabilityTopic?: string | undefined;
  deadManS?: number | undefined;
  safeState: 'off' | 'on';
}

/** The keep-alive (ON re-sent this often while wanted) plus slack for a late cycle, s. */
export const MIN_DEAD_MAN_S = LOOP_POLICY.keepAliveMs / 1000 + 60;
/** deadManS with preset tasmota or shelly when not given (and possible), s. */
export const DEFAULT_TASMOTA_DEAD_MAN_S = 600;

/** Presets whose dead man's switch is on unless the section says otherwise. */
const DEAD_MAN_BY_DEFAULT: readonly SwitchPreset[] = ['tasmota', 'shelly'];

/** The preset applies: it and its device are given (and ESPHome's entity). */
function presetReady(raw: RawSwitch): raw is RawSwitch & { preset: SwitchPreset; device: string } {
  if (raw.preset === undefined || raw.device === undefined) return false;
  return raw.preset !== 'esphome' || raw.entity !== undefined;
}

/** An MQTT relay's own fields over its preset's; keys neither gives are absent. */
export function switchPayloads(raw: RawSwitch): Partial<SwitchPayloads> {
  const preset = presetReady(raw)
    ? switchPreset(raw.preset, raw.device, { switchId: raw.switchId, entity: raw.entity })
    : {};
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

/** The topics and payloads every MQTT relay needs, given or from its preset. */
export const REQUIRED_SWITCH_KEYS = [
  'commandTopic',
  'stateTopic',
  'payloadOn',
  'payloadOff',
  'stateOn',
  'stateOff',
] as const satisfies readonly (keyof SwitchPayloads)[];

/** An MQTT relay's own rules: preset with device, every payload known, absolute and distinct commands. */
export function checkMqttSwitch(raw: RawSwitch, ctx: z.RefinementCtx): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (raw.preset !== undefined && raw.device === undefined) {
    issue(['device'], `required with preset ${raw.preset}`);
    return; // every topic and payload would be missing too: one message says it
  }
  if (raw.preset === 'esphome' && raw.entity === undefined) {
    issue(
      ['entity'],
      "required with preset esphome: the switch's object id (relay for <device>/switch/relay/…)",
    );
    return;
  }
  if (raw.device !== undefined && raw.preset === undefined) {
    issue(
      ['preset'],
      'required with device (tasmota, zigbee2mqtt, shelly or esphome), or give the topics instead',
    );
  }
  if (raw.switchId !== undefined && raw.preset !== 'shelly') issue(['switchId'], 'only with preset shelly');
  if (raw.entity !== undefined && raw.preset !== 'esphome') issue(['entity'], 'only with preset esphome');
  const payloads = switchPayloads(raw);
  for (const key of REQUIRED_SWITCH_KEYS) {
    if (payloads[key] === undefined) issue([key], 'required (or a preset and device)');
  }
  for (const key of ['payloadOn', 'payloadOff'] as const) {
    // A toggle undoes itself when repeated, and the core repeats commands (retry, keep-alive).
    // Shelly's toggle_after (a timer back to off) is not one.
    if (payloads[key] !== undefined && /toggle(?!_after)/i.test(payloads[key])) {
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

/** An explicit deadManS must outlast the keep-alive and fit the device's mechanism. */
function checkDeadMan(
  raw: RawSwitch,
  payloads: Partial<SwitchPayloads>,
  issue: (path: string[], message: string) => void,
): void {
  const seconds = raw.deadManS;
  if (seconds === undefined || seconds === 0) return;
  if (raw.preset === undefined || raw.preset === 'esphome') {
    issue(
      ['deadManS'],
      'needs preset tasmota (PulseTime), zigbee2mqtt (on_time) or shelly (toggle_after); for other ' +
        'devices (ESPHome has no off timer homeostat can set over MQTT) set their own auto-off ' +
        'timer (docs/devices.md), or use 0',
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
export function resolveDeadManS(raw: RawSwitch, payloads: Partial<SwitchPayloads>): number {
  if (raw.deadManS !== undefined) return raw.deadManS;
  const preset = raw.preset;
  if (preset === undefined || !DEAD_MAN_BY_DEFAULT.includes(preset)) return 0;
  if (raw.safeState === 'on' || payloads.commandTopic === undefined) return 0;
  const built = deadManFor(
    preset,
    { commandTopic: payloads.commandTopic, payloadOn: payloads.payloadOn ?? '' },
    DEFAULT_TASMOTA_DEAD_MAN_S,
  );
  return built.ok ? DEFAULT_TASMOTA_DEAD_MAN_S : 0;
}

/** The availability topic: the section's own, else its preset's; undefined without either. */
export function resolveAvailabilityTopic(raw: RawSwitch): string | undefined {
  if (raw.availabilityTopic !== undefined) return raw.availabilityTopic;
  return presetReady(raw) ? availabilityTopic(raw.preset, raw.device) : undefined;
}

/** A resolved MQTT relay's dead man's switch (the schema checked it can be built). */
export function switchDeadMan(
  resolved: SwitchPayloads & { preset?: SwitchPreset | undefined; deadManS: number },
): DeadMan | undefined {
  if (resolved.deadManS <= 0 || resolved.preset === undefined) return undefined;
  const built = deadManFor(resolved.preset, resolved, resolved.deadManS);
  return built.ok ? built.deadMan : undefined;
}
