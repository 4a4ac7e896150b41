import type { CommandResult } from '../operations/schemas.js';
import { httpCommandKind } from '../operations/table.js';
import type { ApiCommand, ApiCommandAnswer, ApiDeps } from './api-deps.js';
import type { AuthThrottle } from './guards.js';
import { HttpError } from './respond.js';
import { lockedOutMessage, type Sessions, tokenMatches } from './security.js';

/** HTTP status of a command's answer: the refusal's kind decides (docs/dashboard.md). */
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
  return submitted(deps, loop, httpCommandKind('setLoop'), body);
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
  return submitted(deps, loop, httpCommandKind('resetFault'), payload);
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
  return submitted(deps, loop, httpCommandKind('autotune'), body);
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
  return submitted(deps, loop, httpCommandKind('applyTuning'), body);
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
  return submitted(deps, loop, httpCommandKind('selectPreset'), body);
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
  return submitted(deps, loop, httpCommandKind('commandProfile'), body);
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

/** What the dashboard's login needs: the token to compare, the sessions to open, the throttle. */
export interface LoginDeps {
  sessions: Sessions;
  token: string | undefined;
  throttle: AuthThrottle;
}

/** POST /api/session: the right token opens a session (an HttpOnly cookie); wrong ones count as guesses. */
export function login(
  { sessions, token, throttle }: LoginDeps,
  body: Buffer,
  throttleKey: string,
): { status: number; body: undefined; headers: Record<string, string> } {
  const lockedMs = throttle.lockedForMs(throttleKey);
  if (lockedMs > 0) {
    throttle.throttled++;
    throw lockedOut(lockedMs);
  }
  const sent = parseTokenBody(body);
  if (token === undefined || sent === undefined || !tokenMatches(sent, token)) {
    if (token !== undefined && sent !== undefined) throttle.failure(throttleKey);
    throw new HttpError(401, 'wrong API token');
  }
  throttle.success(throttleKey);
  return { status: 204, body: undefined, headers: { 'Set-Cookie': sessions.open().cookie } };
}

/** 429 for an address locked out by the wrong-token throttle (lan-policy.ts). */
function lockedOut(lockedMs: number): HttpError {
  const retryAfterS = Math.ceil(lockedMs / 1000);
  return new HttpError(429, lockedOutMessage(retryAfterS), { 'Retry-After': String(retryAfterS) });
}

function parseTokenBody(body: Buffer): string | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as { token?: unknown };
    return typeof value.token === 'string' ? value.token : undefined;
  } catch {
    return undefined;
  }
}
