import { z } from 'zod';
import type { ApiCommand, ApiCommandAnswer, ApiDeps } from './api-deps.js';
import { apiSchemas, type CommandResult } from './schemas.js';

/**
 * Bodies of POST /api/loops/{loop}/preset and /profile. Like the other write bodies
 * (schemas.ts) they only document: the bytes go to the parser of MQTT `preset/set` and
 * `profile/set` (src/control/schedule-payloads.ts), which decides.
 */
export const presetRequest = z
  .object({
    preset: z
      .string()
      .nullable()
      .describe('A preset of the loop (loops.<id>.presets), or null (or "none") for no preset'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'PresetRequest' });

export const profileRequest = z
  .object({
    action: z.enum(['start', 'pause', 'resume', 'stop']),
    name: z.string().optional().describe('The profile to start (loops.<id>.profiles); start only'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'ProfileRequest' });

/** HTTP status of a command's answer: the refusal's kind decides (README "Dashboard and API"). */
const REFUSAL_STATUS: Record<string, number> = {
  'unknown-loop': 404,
  'rate-limited': 429,
  'not-stored': 503,
};

/**
 * POST /api/loops/{loop}: the body is handed, as bytes, to the parser of MQTT `set` commands:
 * the same rules (strict, never clamped), stored before the answer, source `http`.
 */
export function setLoop(deps: ApiDeps, loop: string, body: Buffer): { status: number; body: CommandResult } {
  return submitted(deps, loop, 'json', body);
}

/**
 * POST /api/loops/{loop}/fault-reset: an empty body or `{}` (nothing to choose). Any other body
 * goes to the parser as it is, which refuses it (and the refusal is recorded like any other).
 */
export function resetFault(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  const empty = body.toString('utf8').replace(/\s/g, '');
  const payload = empty === '' || empty === '{}' ? new Uint8Array(0) : body;
  return submitted(deps, loop, 'faultReset', payload);
}

/**
 * POST /api/loops/{loop}/autotune: `{}` (start with the loop's defaults), `{"action": "start",
 * "side"?, "closedLoopS"?, "maxDurationS"?}` or `{"action": "cancel"}`, handed as bytes to the
 * parser of MQTT `autotune/set`: the same rules, stored before the answer, source `http`.
 */
export function requestAutotune(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  return submitted(deps, loop, 'autotune', body);
}

/**
 * POST /api/loops/{loop}/tuning: `{"version": 3 | "latest" | "config"}`, handed as bytes to the
 * parser of MQTT `tuning/set`; the answer says whether the tuning in force `changed`.
 */
export function applyTuning(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  return submitted(deps, loop, 'tuning', body);
}

/**
 * POST /api/loops/{loop}/preset: `{"preset": "eco"}` or `{"preset": null}`, handed as bytes to
 * the parser of MQTT `preset/set`; the answer says whether the preset in force `changed`.
 */
export function selectPreset(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  return submitted(deps, loop, 'preset', body);
}

/**
 * POST /api/loops/{loop}/profile: `{"action": "start", "name": "ale"}`, or `{"action": "pause" |
 * "resume" | "stop"}`, handed as bytes to the parser of MQTT `profile/set`.
 */
export function commandProfile(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  return submitted(deps, loop, 'profile', body);
}

/** A write through the command path every source shares (source `http`), and its HTTP answer. */
function submitted(
  deps: ApiDeps,
  loop: string,
  kind: WriteKind,
  payload: Uint8Array,
): { status: number; body: CommandResult } {
  const command = { loop, kind, payload, source: 'http' as const };
  return answer(loop, deps.submit({ ...command, receivedAtMs: deps.nowMs() }));
}

/** The command kinds written over HTTP. */
type WriteKind = ApiCommand['kind'];

function answer(loop: string, { known, outcome, generation, refusal, changed }: ApiCommandAnswer) {
  // A refusal says why; an unknown loop without one is still a 404 (a store failure is not).
  const status = outcome.accepted ? 200 : (REFUSAL_STATUS[refusal ?? ''] ?? (known ? 422 : 404));
  const body: CommandResult = {
    loop,
    accepted: outcome.accepted,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(generation === undefined ? {} : { generation }),
    ...(outcome.requestId === undefined ? {} : { requestId: outcome.requestId }),
    ...(changed === undefined ? {} : { changed }),
  };
  return { status, body };
}
