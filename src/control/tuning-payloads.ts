/**
 * The autotune and tuning commands' payloads (MQTT `<loop>/autotune/set` and `<loop>/tuning/set`,
 * the HTTP bodies of POST /api/loops/{loop}/autotune and /tuning, handed over as the same
 * bytes): parsed strictly, refused with a reason, never guessed at or clamped. What the loop
 * itself allows (its controller, mode and actuators) is checked on the command path
 * (control/autotune-checks.ts), which knows the desired mode.
 *
 * Pure: text in, an outcome out (parseCommand in commands.ts calls these after the size limit
 * and UTF-8 checks).
 */
import { z } from 'zod';
import type { Direction } from '../core/types.js';
import { describeIssues, MAX_REQUEST_ID_LENGTH, parseJsonObject, quote, reject } from './command-json.js';
import type { CommandOutcome } from './commands.js';

/** What an accepted autotune command asks for; absent options take the loop's defaults. */
export type AutotuneChange =
  | { action: 'start'; side?: Direction; closedLoopS?: number; maxDurationS?: number }
  | { action: 'cancel' };

/** A tuning to put in force: a stored version, the newest stored one, or the config file's gains. */
export type TuningTarget = number | 'latest' | 'config';

/**
 * Longest run a request may ask for, seconds: 7 days. The slowest benchmark plant needs about
 * a day (the core's default limit is 48 h); a larger number is a unit mistake (milliseconds
 * sent as seconds), refused rather than waited out for months.
 */
export const MAX_AUTOTUNE_DURATION_S = 7 * 86_400;
/** Largest SIMC closed-loop time constant a request may ask for, seconds: 1 day. */
export const MAX_CLOSED_LOOP_S = 86_400;

const AUTOTUNE_EXAMPLE = '{"action": "start", "side": "raise"} or {"action": "cancel"}';
const TUNING_EXAMPLE = '{"version": 3}, {"version": "latest"} or {"version": "config"}';

const autotuneSchema = z.strictObject({
  action: z.enum(['start', 'cancel']).optional(),
  side: z.enum(['raise', 'lower']).optional(),
  closedLoopS: z.number().optional(),
  maxDurationS: z.number().optional(),
  requestId: z.string().max(MAX_REQUEST_ID_LENGTH).optional(),
});

const tuningSchema = z.strictObject({
  version: z.union([z.number(), z.string()]),
  requestId: z.string().max(MAX_REQUEST_ID_LENGTH).optional(),
});

/**
 * `<loop>/autotune/set`: `start` starts with the loop's defaults, `cancel` cancels,
 * or a JSON object `{"action"?: "start"|"cancel", "side"?: "raise"|"lower", "closedLoopS"?,
 * "maxDurationS"?, "requestId"?}` (`{}` starts). Durations are seconds, finite, above 0 and
 * within a sane bound; a cancel takes no options.
 */
export function autotuneCommand(text: string): CommandOutcome {
  const trimmed = text.trim();
  // An empty payload is refused, not taken for a start: it is how MQTT clears a retained message
  // (`mosquitto_pub -r -n`), and clearing one must never start a relay experiment of hours.
  if (trimmed === 'start') return { accepted: true, change: { autotune: { action: 'start' } } };
  if (trimmed === 'cancel') return { accepted: true, change: { autotune: { action: 'cancel' } } };
  if (!trimmed.startsWith('{')) {
    return reject(
      `autotune takes "start", "cancel" or a JSON object such as ${AUTOTUNE_EXAMPLE} (got ${quote(text)})`,
    );
  }
  const json = parseJsonObject(trimmed, AUTOTUNE_EXAMPLE);
  if (!json.ok) return json.outcome;
  const { requestId } = json;
  const parsed = autotuneSchema.safeParse(json.value);
  if (!parsed.success) return reject(`invalid autotune command: ${describeIssues(parsed.error)}`, requestId);
  const { action = 'start', side, closedLoopS, maxDurationS } = parsed.data;
  const id = requestId === undefined ? {} : { requestId };
  if (action === 'cancel') {
    const options = [side, closedLoopS, maxDurationS].some((value) => value !== undefined);
    if (options) {
      return reject(
        'a cancel takes no options: side, closedLoopS and maxDurationS are for a start',
        requestId,
      );
    }
    return { accepted: true, change: { autotune: { action } }, ...id };
  }
  const bad =
    seconds('closedLoopS', closedLoopS, MAX_CLOSED_LOOP_S) ??
    seconds('maxDurationS', maxDurationS, MAX_AUTOTUNE_DURATION_S);
  if (bad !== undefined) return reject(bad, requestId);
  return {
    accepted: true,
    change: {
      autotune: {
        action,
        ...(side === undefined ? {} : { side }),
        ...(closedLoopS === undefined ? {} : { closedLoopS }),
        ...(maxDurationS === undefined ? {} : { maxDurationS }),
      },
    },
    ...id,
  };
}

/**
 * `<loop>/tuning/set`: `latest` (accept the newest stored tuning), `config` (the config file's
 * gains), a version number as plain digits (`3`), or JSON `{"version": 3|"latest"|"config",
 * "requestId"?}`. Whether the version exists is the store's to say.
 */
export function tuningCommand(text: string): CommandOutcome {
  const trimmed = text.trim();
  if (trimmed === 'latest' || trimmed === 'config') return { accepted: true, change: { tuning: trimmed } };
  if (/^\d+$/.test(trimmed)) return version(Number(trimmed), undefined, trimmed);
  if (!trimmed.startsWith('{')) {
    return reject(
      `tuning takes "latest", "config", a version number such as 3, or JSON such as ${TUNING_EXAMPLE} (got ${quote(text)})`,
    );
  }
  const json = parseJsonObject(trimmed, TUNING_EXAMPLE);
  if (!json.ok) return json.outcome;
  const { requestId } = json;
  const parsed = tuningSchema.safeParse(json.value);
  if (!parsed.success) return reject(`invalid tuning command: ${describeIssues(parsed.error)}`, requestId);
  const asked = parsed.data.version;
  if (asked === 'latest' || asked === 'config') {
    return { accepted: true, change: { tuning: asked }, ...(requestId === undefined ? {} : { requestId }) };
  }
  if (typeof asked === 'string') {
    return reject(`tuning version must be a number, "latest" or "config" (got ${quote(asked)})`, requestId);
  }
  return version(asked, requestId, String(asked));
}

/** A version number as asked: a whole number from 1 (versions start at 1, see migration 5). */
function version(value: number, requestId: string | undefined, spelled: string): CommandOutcome {
  // One spelling per value: 3, not 03 (and 0 is no version).
  if (!Number.isSafeInteger(value) || value < 1 || spelled !== String(value)) {
    return reject(`tuning version must be a whole number from 1 (got ${quote(spelled)})`, requestId);
  }
  return { accepted: true, change: { tuning: value }, ...(requestId === undefined ? {} : { requestId }) };
}

/** Why a duration in seconds is refused, or undefined when it is absent or fine. */
function seconds(name: string, value: number | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    return `${name} must be a number of seconds above 0 and at most ${max} (got ${value})`;
  }
  return undefined;
}
