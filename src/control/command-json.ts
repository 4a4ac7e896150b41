/**
 * The small pieces every command parser shares (commands.ts, schedule-payloads.ts,
 * tuning-payloads.ts): refusals with the requestId kept, UTF-8 decoding, quoting a payload for
 * a message, and the checks of a JSON object command (duplicate keys, a requestId salvaged from
 * an invalid one, zod issues as text).
 *
 * Pure: no IO.
 */
import type { z } from 'zod';
import type { CommandOutcome } from './commands.js';

/** Longest requestId echoed back, characters. */
export const MAX_REQUEST_ID_LENGTH = 64;

/**
 * The keys at the top level of a JSON object text, in order, each with the index just past its
 * closing quote. `text` must already have parsed, so it is valid JSON: this only walks the top
 * level, skipping strings and nested values, and decodes each key with JSON.parse (escapes such
 * as `"set\u0070oint"` are the same key).
 */
function* topLevelKeys(text: string): Generator<{ key: string; endIndex: number }> {
  let depth = 0;
  /** At depth 1, the next string is a key (after `{` or a `,`), not a value (after `:`). */
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && expectKey) {
        yield { key: JSON.parse(text.slice(start, i + 1)) as string, endIndex: i + 1 };
        expectKey = false;
      }
    } else if (char === '{' || char === '[') {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (char === '}' || char === ']') {
      depth--;
    } else if (char === ',' && depth === 1) {
      expectKey = true;
    }
  }
}

/**
 * The first key that appears twice at the top level of a JSON object text, or undefined.
 * JSON.parse keeps the last of duplicate keys without a word (`{"setpoint":99,"setpoint":6}`
 * is 6), and another parser may keep the first: what the sender meant is unknown. `text` must
 * already have parsed to `value`.
 */
export function duplicateTopLevelKey(text: string, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const seen = new Set<string>();
  for (const { key } of topLevelKeys(text)) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

/**
 * The text of the number given for top-level `key` in a JSON object text (already parsed, so
 * valid JSON), or undefined when `key` is absent or its value is not a bare number. JSON.parse
 * turns `20.0000000000000000000001` and `2e1` into 20 without a trace; a command parser that
 * must refuse spellings it would have to round reads the number as it was written.
 */
export function topLevelNumberText(text: string, key: string): string | undefined {
  for (const entry of topLevelKeys(text)) {
    if (entry.key !== key) continue;
    return /^\s*:\s*(-?[0-9][0-9.eE+-]*)\s*[,}]/.exec(text.slice(entry.endIndex))?.[1];
  }
  return undefined;
}

/** The requestId of a command that failed validation elsewhere, so its sender can still correlate. */
export function salvageRequestId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (!Object.hasOwn(value, 'requestId')) return undefined;
  const id = (value as { requestId?: unknown }).requestId;
  return typeof id === 'string' && id.length <= MAX_REQUEST_ID_LENGTH ? id : undefined;
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/**
 * A JSON object command's text parsed: the value, or a refusal (not JSON, a key sent twice),
 * with the requestId salvaged when there is one. `example` completes "expected …" for a person.
 */
export function parseJsonObject(
  text: string,
  example: string,
): { ok: true; value: unknown; requestId?: string } | { ok: false; outcome: CommandOutcome } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, outcome: reject(`payload is not JSON: expected ${example}`) };
  }
  const duplicate = duplicateTopLevelKey(text, value);
  const requestId = duplicate === 'requestId' ? undefined : salvageRequestId(value);
  if (duplicate !== undefined) {
    return {
      ok: false,
      outcome: reject(
        `duplicate key ${quote(duplicate)} in the JSON object: send each field once`,
        requestId,
      ),
    };
  }
  return { ok: true, value, ...withRequestId(requestId) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** A payload quoted for a message: JSON-escaped (no control characters reach logs) and short. */
export function quote(text: string): string {
  const short = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(short);
}

export function reject(reason: string, requestId?: string): CommandOutcome {
  return { accepted: false, reason, ...withRequestId(requestId) };
}

export function withRequestId(requestId: string | undefined): { requestId?: string } {
  return requestId === undefined ? {} : { requestId };
}
