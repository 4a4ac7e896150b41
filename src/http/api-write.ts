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
  return answer(
    loop,
    deps.submit({ loop, kind: 'json', payload: body, source: 'http', receivedAtMs: deps.nowMs() }),
  );
}

/** POST /api/loops/{loop}/fault-reset: an empty body or `{}` (nothing to choose). */
export function resetFault(
  deps: ApiDeps,
  loop: string,
  body: Buffer,
): { status: number; body: CommandResult } {
  const text = body.toString('utf8').trim();
  if (text !== '' && text.replace(/\s/g, '') !== '{}') {
    return { status: 422, body: { loop, accepted: false, reason: 'fault reset takes an empty body or {}' } };
  }
  return answer(
    loop,
    deps.submit({
      loop,
      kind: 'faultReset',
      payload: new Uint8Array(0),
      source: 'http',
      receivedAtMs: deps.nowMs(),
    }),
  );
}

function answer(loop: string, { known, outcome, generation, refusal }: ApiCommandAnswer) {
  const status = outcome.accepted ? 200 : !known ? 404 : (REFUSAL_STATUS[refusal ?? ''] ?? 422);
  const body: CommandResult = {
    loop,
    accepted: outcome.accepted,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(generation === undefined ? {} : { generation }),
    ...(outcome.requestId === undefined ? {} : { requestId: outcome.requestId }),
  };
  return { status, body };
}
