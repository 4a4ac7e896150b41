/**
 * The preset and profile commands' payloads (MQTT `<loop>/preset/set` and
 * `<loop>/profile/set`, the HTTP bodies of POST /api/loops/{loop}/preset and /profile, handed
 * over as the same bytes): parsed strictly, refused with a reason, never guessed at. Whether
 * the loop has that preset or profile is checked on the command path
 * (control/schedule-commands.ts), which knows the config.
 *
 * Pure: text in, an outcome out (parseCommand in commands.ts calls these after the size limit
 * and UTF-8 checks).
 */
import { z } from 'zod';
import { describeIssues, MAX_REQUEST_ID_LENGTH, parseJsonObject, quote, reject } from './command-json.js';
import type { CommandOutcome } from './commands.js';

/** What an accepted profile command asks for; whether the name exists is the command path's check. */
export type ProfileChange = { action: 'start'; name: string } | { action: 'pause' | 'resume' | 'stop' };

/**
 * The word that clears the preset. Home Assistant's climate sends it (PRESET_NONE) when a person
 * picks "none", and adds it to the list of presets itself: a preset cannot be named so.
 */
export const NO_PRESET = 'none';

/** Longest preset or profile name accepted, characters: a config key, never a paragraph. */
export const MAX_NAME_LENGTH = 64;

const PRESET_EXAMPLE = '{"preset": "eco"} or {"preset": null}';
const PROFILE_EXAMPLE = '{"action": "start", "name": "ale"} or {"action": "pause"}';

const presetSchema = z.strictObject({
  preset: z.string().nullable(),
  requestId: z.string().max(MAX_REQUEST_ID_LENGTH).optional(),
});

const profileSchema = z.strictObject({
  action: z.enum(['start', 'pause', 'resume', 'stop']),
  name: z.string().optional(),
  requestId: z.string().max(MAX_REQUEST_ID_LENGTH).optional(),
});

/**
 * `<loop>/preset/set`: a preset name, `none` (no preset: the setpoint stays where it is), or
 * JSON `{"preset": name | null, "requestId"?}`. An empty payload is refused: it is how MQTT
 * clears a retained message (`mosquitto_pub -r -n`), never a selection.
 */
export function presetCommand(text: string): CommandOutcome {
  const trimmed = text.trim();
  if (trimmed === '') {
    return reject(
      `preset takes a preset name or "${NO_PRESET}" (an empty payload only clears a retained message)`,
    );
  }
  if (!trimmed.startsWith('{')) return presetNamed(trimmed, undefined);
  const json = parseJsonObject(trimmed, PRESET_EXAMPLE);
  if (!json.ok) return json.outcome;
  const { requestId } = json;
  const parsed = presetSchema.safeParse(json.value);
  if (!parsed.success) return reject(`invalid preset command: ${describeIssues(parsed.error)}`, requestId);
  const { preset } = parsed.data;
  if (preset === null) return accepted({ preset: null }, requestId);
  // In JSON, null is "no preset"; the word none means the same (as Home Assistant sends it).
  return presetNamed(preset.trim(), requestId);
}

function presetNamed(name: string, requestId: string | undefined): CommandOutcome {
  if (name === NO_PRESET) return accepted({ preset: null }, requestId);
  const bad = nameProblem('preset', name);
  if (bad) return reject(bad, requestId);
  return accepted({ preset: name }, requestId);
}

/**
 * `<loop>/profile/set`: `start NAME`, `pause`, `resume`, `stop`, or JSON
 * `{"action": "start"|"pause"|"resume"|"stop", "name"?, "requestId"?}`; a start needs a name,
 * the others take none. An empty payload is refused (see presetCommand).
 */
export function profileCommand(text: string): CommandOutcome {
  const trimmed = text.trim();
  if (trimmed === 'pause' || trimmed === 'resume' || trimmed === 'stop') {
    return accepted({ profile: { action: trimmed } }, undefined);
  }
  const start = /^start(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (start) return profileStart((start[1] ?? '').trim(), undefined);
  if (!trimmed.startsWith('{')) {
    return reject(
      `profile takes "start NAME", "pause", "resume", "stop" or JSON such as ${PROFILE_EXAMPLE} (got ${quote(text)})`,
    );
  }
  const json = parseJsonObject(trimmed, PROFILE_EXAMPLE);
  if (!json.ok) return json.outcome;
  const { requestId } = json;
  const parsed = profileSchema.safeParse(json.value);
  if (!parsed.success) return reject(`invalid profile command: ${describeIssues(parsed.error)}`, requestId);
  const { action, name } = parsed.data;
  if (action === 'start') return profileStart((name ?? '').trim(), requestId);
  if (name !== undefined) {
    return reject(`a ${action} takes no name: it acts on the profile that was started`, requestId);
  }
  return accepted({ profile: { action } }, requestId);
}

function profileStart(name: string, requestId: string | undefined): CommandOutcome {
  if (name === '') return reject('a start needs the profile to start: "start NAME"', requestId);
  const bad = nameProblem('profile', name);
  if (bad) return reject(bad, requestId);
  return accepted({ profile: { action: 'start', name } }, requestId);
}

/** Why a name is refused before the config is asked (control characters, length), or undefined. */
function nameProblem(what: string, name: string): string | undefined {
  if (name === '') return `${what} name is empty`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return `${what} name ${quote(name)} contains control characters`;
  if (name.length > MAX_NAME_LENGTH) {
    return `${what} name is longer than ${MAX_NAME_LENGTH} characters (got ${quote(name)})`;
  }
  return undefined;
}

function accepted(
  change: { preset: string | null } | { profile: ProfileChange },
  requestId: string | undefined,
): CommandOutcome {
  return { accepted: true, change, ...(requestId === undefined ? {} : { requestId }) };
}
