/**
 * The rules of an `mqtt_binary` section (mqtt-binary.ts) apart from its schema: which keys go
 * together, and what the section resolves to (the preset's topics and words, the liveness of
 * its family's availability topic).
 */
import type { z } from 'zod';
import {
  type BinaryPreset,
  type BinarySource,
  type BinaryWord,
  binaryPreset,
  DEFAULT_OFF,
  DEFAULT_ON,
  defaultBinaryInput,
} from '../../drivers/mqtt/binary-payload.js';
import type { LivenessOptions } from '../../drivers/mqtt/liveness.js';
import { type LivenessSection, livenessOptions } from './mqtt-liveness.js';

/**
 * maxQuietS of a contact when its liveness block gives none, s: 25 h, Zigbee2MQTT's passive
 * availability timeout for battery devices (zigbee2mqtt.io guide/configuration/device-availability:
 * 1500 min), past which it would call the device offline itself. A contact reports only on
 * change and a window stays shut for days; Zigbee2MQTT republishes the state at each check-in.
 */
export const CONTACT_MAX_QUIET_S = 90_000;

/** staleAfterS of a contact when the file gives none, s: two of an Aqara contact's hourly check-ins. */
export const CONTACT_STALE_AFTER_S = 7_200;

/** An mqtt_binary section as parsed. */
export interface RawMqttBinary {
  kind: 'mqtt_binary';
  preset?: BinaryPreset | undefined;
  device?: string | undefined;
  input?: string | number | undefined;
  topic?: string | undefined;
  field?: string | undefined;
  on?: BinaryWord[] | undefined;
  off?: BinaryWord[] | undefined;
  invert: boolean;
  liveness?: LivenessSection | undefined;
  periodS: number;
  staleAfterS: number;
}

/** A section resolved: the topics it reads, the words of 1 and 0, where its liveness comes from. */
export type MqttBinaryConfig = RawMqttBinary & {
  sources: BinarySource[];
  onWords: readonly BinaryWord[];
  offWords: readonly BinaryWord[];
  livenessOptions: LivenessOptions | undefined;
};

/** Keys that come from the preset: given beside it they would be ignored, so they are refused. */
const PRESET_KEYS = ['topic', 'field'] as const;

/** The schema's cross-field checks. */
export function checkMqttBinary(section: RawMqttBinary, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (section.preset === undefined) {
    if (section.topic === undefined) issue('topic', 'required without preset');
    if (section.device !== undefined) issue('preset', 'required with device');
    if (section.input !== undefined) issue('input', 'only with preset');
  } else {
    checkPreset(section, section.preset, issue);
  }
  if ((section.on === undefined) !== (section.off === undefined)) {
    issue(section.on === undefined ? 'on' : 'off', 'give on and off together');
  }
  const clash = (section.on ?? []).find((word) => (section.off ?? []).some((off) => sameWord(word, off)));
  if (clash !== undefined) issue('off', `${JSON.stringify(clash)} is in both on and off`);
  if (section.staleAfterS <= section.periodS) {
    issue('staleAfterS', `must be greater than periodS (${section.periodS})`);
  }
  // A quiet state is kept past staleAfterS only: a bound at or below it would never apply.
  const hasLiveness =
    section.liveness !== undefined || (section.preset !== undefined && section.device !== undefined);
  const maxQuietS = section.liveness?.maxQuietS ?? CONTACT_MAX_QUIET_S;
  if (hasLiveness && !(maxQuietS > section.staleAfterS)) {
    ctx.addIssue({
      code: 'custom',
      path: ['liveness', 'maxQuietS'],
      message:
        `must be greater than staleAfterS (${section.staleAfterS} s): a quiet state is kept in force ` +
        `past staleAfterS up to maxQuietS (${maxQuietS} s)`,
    });
  }
}

function checkPreset(
  section: RawMqttBinary,
  preset: BinaryPreset,
  issue: (path: string, message: string) => void,
): void {
  if (section.device === undefined) issue('device', `required with preset ${preset}`);
  for (const key of PRESET_KEYS) {
    if (section[key] !== undefined) issue(key, `comes from preset ${preset}: remove it, or the preset`);
  }
  const input = section.input ?? defaultBinaryInput(preset);
  if (input === undefined) {
    issue('input', `required with preset ${preset} (the binary sensor's object id)`);
  } else if (preset === 'zigbee2mqtt' || preset === 'esphome') {
    if (typeof input !== 'string' || /[/+#.\s]/.test(input)) {
      issue('input', `with preset ${preset}, a name such as ${preset === 'esphome' ? 'window' : 'contact'}`);
    }
  } else if (typeof input !== 'number') {
    issue(
      'input',
      `with preset ${preset}, a number (${preset === 'tasmota' ? 'Switch1 is 1' : 'input:0 is 0'})`,
    );
  } else if (preset === 'tasmota' && input < 1) {
    issue('input', 'with preset tasmota, 1 or more (Switch1 is 1)');
  }
}

/** The topics, words and liveness a section stands for. */
export function resolveMqttBinary(raw: RawMqttBinary): MqttBinaryConfig {
  const fromPreset =
    raw.preset !== undefined && raw.device !== undefined
      ? binaryPreset(raw.preset, raw.device, raw.input ?? defaultBinaryInput(raw.preset) ?? '')
      : undefined;
  const sources = fromPreset?.sources ?? [{ topic: raw.topic ?? '', field: raw.field }];
  const on = raw.on ?? fromPreset?.on ?? DEFAULT_ON;
  const off = raw.off ?? fromPreset?.off ?? DEFAULT_OFF;
  // With a preset, the family's availability topic shows the device alive unless the file says how.
  const block: LivenessSection | undefined =
    raw.liveness ??
    (raw.preset !== undefined && raw.device !== undefined
      ? { preset: raw.preset, device: raw.device }
      : undefined);
  return {
    ...raw,
    sources,
    onWords: raw.invert ? off : on,
    offWords: raw.invert ? on : off,
    livenessOptions:
      block === undefined
        ? undefined
        : livenessOptions({ ...block, maxQuietS: block.maxQuietS ?? CONTACT_MAX_QUIET_S }),
  };
}

function sameWord(a: BinaryWord, b: BinaryWord): boolean {
  return String(a).trim().toLowerCase() === String(b).trim().toLowerCase();
}
