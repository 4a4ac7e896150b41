import type { ApiCommandAnswer, ApiDeps } from './api-deps.js';
import type { CommandResult } from './schemas.js';

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

/** A write through the command path every source shares (source `http`), and its HTTP answer. */
function submitted(
  deps: ApiDeps,
  loop: string,
  kind: Parameters<ApiDeps['submit']>[0]['kind'],
  payload: Uint8Array,
): { status: number; body: CommandResult } {
  return answer(loop, deps.submit({ loop, kind, payload, source: 'http', receivedAtMs: deps.nowMs() }));
}

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
