/**
 * Commands received over MQTT or HTTP (the same bytes), parsed strictly and validated against
 * the loop they address.
 *
 * A command is desired state from outside: anything we are not sure about is rejected with a
 * reason a person can act on, never guessed at, clamped or partly applied. A rejected command
 * changes nothing. Commands are absolute (a setpoint, a mode), so a duplicate delivered by
 * QoS 1 applies the same change twice, which is the same as once.
 *
 * Pure: bytes in, an outcome out. The caller applies an accepted change (bumping the loop's
 * generation) and publishes `resultPayload(...)` on `<loop>/result`.
 */

import { z } from 'zod';
import type { Mode } from '../core/types.js';
import {
  decodeUtf8,
  describeIssues,
  MAX_REQUEST_ID_LENGTH,
  parseJsonObject,
  quote,
  reject,
  topLevelNumberText,
  withRequestId,
} from './command-json.js';
import { NO_PRESET, type ProfileChange, presetCommand, profileCommand } from './schedule-payloads.js';
import { type AutotuneChange, autotuneCommand, type TuningTarget, tuningCommand } from './tuning-payloads.js';

export { MAX_REQUEST_ID_LENGTH } from './command-json.js';
export { NO_PRESET, type ProfileChange } from './schedule-payloads.js';
export type { AutotuneChange, TuningTarget } from './tuning-payloads.js';

/**
 * What a command asks for, whichever way it came in (an MQTT command topic, an HTTP route, the
 * CLI through either): each transport maps its own address onto one of these.
 */
export type CommandKind =
  | 'setpoint'
  | 'mode'
  | 'json'
  | 'faultReset'
  | 'autotune'
  | 'tuning'
  | 'preset'
  | 'profile';

/** The change an accepted command asks for. */
export interface CommandChange {
  setpoint?: number;
  mode?: Mode;
  /** Fault reset: clear latched faults (nothing else changes). */
  faultReset?: true;
  /** Start or cancel the loop's relay autotune (nothing else changes). */
  autotune?: AutotuneChange;
  /** Put a stored tuning in force, or the config file's gains (nothing else changes). */
  tuning?: TuningTarget;
  /** Select a preset by name, or none (null); the setpoint (and mode) follow from the config. */
  preset?: string | null;
  /** Start, pause, resume or stop a profile (nothing else changes). */
  profile?: ProfileChange;
}

export type CommandOutcome =
  | { accepted: true; change: CommandChange; requestId?: string }
  | { accepted: false; reason: string; requestId?: string };

/**
 * What the daemon answers a fault reset (Daemon.requestFaultReset), published on
 * `<loop>/result` like any command: accepted once the reset is committed as desired state,
 * with the generation it got; refused, changing nothing, with a reason a person can act on.
 */
export type FaultResetOutcome =
  | { accepted: true; generation?: number }
  | { accepted: false; reason: string; generation?: number };

/** The reason of a reset refused because no fault is latched (or only one latched after it). */
export const NOTHING_LATCHED_REASON = 'nothing to reset: no fault is latched on this loop';

/** What a command is validated against. */
export interface CommandTarget {
  /** Setpoint limits, loop unit (inclusive). */
  limits: { min: number; max: number };
  /** Modes this loop allows (allowedModes in config/schema.ts). */
  modes: readonly Mode[];
  /**
   * Setpoint step of user interfaces, loop unit. Not enforced: it is a UI hint (Home
   * Assistant already rounds to it) and a script may legitimately ask for 20.25.
   */
  step?: number;
}

export interface ParseOptions {
  /** Largest payload accepted, bytes. Default 1024: every valid command is far smaller. */
  maxPayloadBytes?: number;
}

/** Default limit on a command payload, bytes. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024;

/**
 * A plain decimal: optional minus, digits without leading zeros, optional fraction. No
 * whitespace, exponent (`1e3`), hex, `Infinity`, `NaN`, leading `+`, `00020` or `.5`, comma
 * decimals or quotes: one spelling per value, so what a person typed is what the loop gets.
 */
const PLAIN_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/**
 * Decimal places a setpoint may carry (more when the loop's step has more): a thousandth of a
 * degree or a percent is finer than any sensor homeostat reads, and a longer fraction such as
 * `20.0000000000000000000001` would be rounded (to 20) by the conversion to a number: refused,
 * never guessed.
 */
export const SETPOINT_DECIMALS = 3;

const jsonCommandSchema = z.strictObject({
  setpoint: z.number().optional(),
  mode: z.string().optional(),
  preset: z.string().nullable().optional(),
  requestId: z.string().max(MAX_REQUEST_ID_LENGTH).optional(),
});

/**
 * Parses and validates one command. Order: size limit, UTF-8, syntax, then the loop's rules
 * (limits, allowed modes). Never throws.
 */
export function parseCommand(
  kind: CommandKind,
  payload: Uint8Array,
  loop: CommandTarget,
  opts: ParseOptions = {},
): CommandOutcome {
  const maxBytes = opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  if (payload.byteLength > maxBytes) {
    return reject(`payload is ${payload.byteLength} bytes, more than the ${maxBytes} allowed`);
  }
  const text = decodeUtf8(payload);
  if (text === undefined) return reject('payload is not valid UTF-8 text');

  switch (kind) {
    case 'setpoint':
      return setpointCommand(text, loop);
    case 'mode':
      return modeCommand(text, loop);
    case 'json':
      return jsonCommand(text, loop);
    case 'faultReset':
      return faultResetCommand(text);
    case 'autotune':
      return autotuneCommand(text);
    case 'tuning':
      return tuningCommand(text);
    case 'preset':
      return presetCommand(text);
    case 'profile':
      return profileCommand(text);
  }
}

function setpointCommand(text: string, loop: CommandTarget): CommandOutcome {
  const refusal = setpointSpellingRefusal(text, loop);
  return refusal === undefined ? checkSetpoint(Number(text), loop) : reject(refusal);
}

/** Why `text` is not exactly a setpoint in the loop's precision; undefined when it is. */
function setpointSpellingRefusal(text: string, loop: CommandTarget): string | undefined {
  if (!PLAIN_NUMBER.test(text)) {
    if (text.trim() !== text && PLAIN_NUMBER.test(text.trim())) {
      return `setpoint must have no spaces or line ends around it (got ${quote(text)})`;
    }
    if (/^-?0\d/.test(text)) return `setpoint must have no leading zeros (got ${quote(text)})`;
    return `setpoint must be a plain decimal number such as 21 or 21.5 (got ${quote(text)})`;
  }
  const decimals = text.split('.')[1]?.length ?? 0;
  const allowed = Math.max(SETPOINT_DECIMALS, decimalPlaces(loop.step));
  if (decimals > allowed) {
    return `setpoint ${quote(text)} has more than ${allowed} decimal places: send it rounded as you mean it`;
  }
  return undefined;
}

/** Decimal places of a step such as 0.5 or 0.05 (0 when none is given). */
function decimalPlaces(step: number | undefined): number {
  if (step === undefined || !Number.isFinite(step)) return 0;
  const fraction = String(step).split('.')[1];
  return fraction === undefined || fraction.includes('e') ? 0 : fraction.length;
}

function modeCommand(text: string, loop: CommandTarget): CommandOutcome {
  return checkMode(text.trim(), loop);
}

function faultResetCommand(text: string): CommandOutcome {
  const trimmed = text.trim();
  if (trimmed !== '' && trimmed !== 'reset') {
    return reject(`fault reset takes an empty payload or "reset" (got ${quote(text)})`);
  }
  return { accepted: true, change: { faultReset: true } };
}

function jsonCommand(text: string, loop: CommandTarget): CommandOutcome {
  const json = parseJsonObject(text, '{"setpoint": 21.5} and/or {"mode": "heat"}');
  if (!json.ok) return json.outcome;
  const { value, requestId } = json;
  const parsed = jsonCommandSchema.safeParse(value);
  if (!parsed.success) {
    return reject(`invalid command: ${describeIssues(parsed.error)}`, requestId);
  }
  const { setpoint, mode, preset } = parsed.data;
  if (preset !== undefined) {
    // A preset brings its own setpoint (and maybe mode): with another one as well, which the
    // sender meant is unknown.
    if (setpoint !== undefined || mode !== undefined) {
      return reject('a preset sets the setpoint (and maybe the mode) itself: send it alone', requestId);
    }
    const named = preset === null ? NO_PRESET : preset;
    return presetCommand(JSON.stringify({ preset: named, ...withRequestId(requestId) }));
  }
  if (setpoint === undefined && mode === undefined) {
    return reject('command needs a setpoint, a mode or both, or a preset', requestId);
  }

  const change: CommandChange = {};
  if (setpoint !== undefined) {
    const written = topLevelNumberText(text, 'setpoint') ?? String(setpoint);
    const refusal = setpointSpellingRefusal(written, loop);
    if (refusal !== undefined) return reject(refusal, requestId);
    const outcome = checkSetpoint(setpoint, loop);
    if (!outcome.accepted) return { ...outcome, ...withRequestId(requestId) };
    change.setpoint = outcome.change.setpoint!;
  }
  if (mode !== undefined) {
    const outcome = checkMode(mode, loop);
    if (!outcome.accepted) return { ...outcome, ...withRequestId(requestId) };
    change.mode = outcome.change.mode!;
  }
  return { accepted: true, change, ...withRequestId(requestId) };
}

function checkSetpoint(value: number, loop: CommandTarget): CommandOutcome {
  if (!Number.isFinite(value)) return reject('setpoint must be a finite number');
  // -0 is 0: keep it out of stored state and JSON (where it would print as 0 anyway).
  const setpoint = value === 0 ? 0 : value;
  const { min, max } = loop.limits;
  if (setpoint < min || setpoint > max) {
    return reject(`setpoint ${setpoint} is outside the limits ${min}..${max}`);
  }
  return { accepted: true, change: { setpoint } };
}

function checkMode(mode: string, loop: CommandTarget): CommandOutcome {
  const allowed = loop.modes.find((m) => m === mode);
  if (allowed === undefined) {
    return reject(`mode ${quote(mode)} is not allowed for this loop (allowed: ${loop.modes.join(', ')})`);
  }
  return { accepted: true, change: { mode: allowed } };
}

/** What `resultPayload` needs besides the outcome. */
export interface ResultContext {
  loop: string;
  /** When the command was handled, ISO-8601. */
  atIso: string;
  /** Accepted: the generation the change produced. Rejected: the loop's current one (unchanged). */
  generation?: number;
}

/**
 * The JSON published (not retained) on `<loop>/result`, one per command:
 * `{"loop","accepted":true,"change":{…},"generation","requestId"?,"at"}` or
 * `{"loop","accepted":false,"reason","generation"?,"requestId"?,"at"}`.
 */
export function resultPayload(outcome: CommandOutcome & ResultContext): string {
  const common = {
    loop: outcome.loop,
    ...(outcome.requestId === undefined ? {} : { requestId: outcome.requestId }),
  };
  const generation = outcome.generation === undefined ? {} : { generation: outcome.generation };
  const body = outcome.accepted
    ? { ...common, accepted: true, change: outcome.change, ...generation, at: outcome.atIso }
    : { ...common, accepted: false, reason: outcome.reason, ...generation, at: outcome.atIso };
  return JSON.stringify(body);
}
