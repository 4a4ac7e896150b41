import { parseDurationMs } from '../operations/duration.js';
import { HttpError } from './respond.js';

/** How far after now a time may be: a client's clock a little ahead is fine, year 9999 is not. */
export const MAX_FUTURE_MS = 366 * 86_400_000;

/**
 * A time in a query string: ISO 8601 (`2026-11-30T12:00:00Z`) or a duration back from now
 * (`6h`, `90m`, `7d`). Absent: `fallbackMs`. Anything else is a 400 naming the parameter, and
 * so is a time before 1970 or more than MAX_FUTURE_MS after now (`99999999999d` back from now
 * is no date at all: answering it threw while formatting it).
 */
export function queryTimeMs(url: URL, name: string, nowMs: number, fallbackMs: number): number {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return fallbackMs;
  const quoted = `"${text.slice(0, 64)}"`;
  let ms: number;
  if (/^\d+(\.\d+)?\s*[smhd]$/.test(text.trim())) {
    ms = nowMs - parseDurationMs(text);
  } else {
    ms = Date.parse(text);
    if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
      throw new HttpError(400, `${name}: ${quoted} is neither an ISO time nor a duration such as 6h`);
    }
  }
  if (!Number.isFinite(ms) || ms < 0) throw new HttpError(400, `${name}: ${quoted} is before 1970`);
  if (ms > nowMs + MAX_FUTURE_MS) {
    throw new HttpError(400, `${name}: ${quoted} is more than ${MAX_FUTURE_MS / 86_400_000} days from now`);
  }
  return ms;
}

/** A positive integer in a query string, at most `max`; absent: `fallback`. */
export function queryCount(url: URL, name: string, fallback: number, max: number): number {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new HttpError(400, `${name}: "${text.slice(0, 64)}" must be a whole number from 1 to ${max}`);
  }
  return Number(text);
}

/** An optional text parameter, at most 64 characters. */
export function queryText(url: URL, name: string): string | undefined {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return undefined;
  if (text.length > 64) throw new HttpError(400, `${name}: longer than 64 characters`);
  return text;
}
