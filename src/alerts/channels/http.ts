/**
 * One POST to a notification service, its answer classified: taken (2xx), to retry (a network
 * error, a timeout, 408, 429 or 5xx; after the server's Retry-After when it gives one), or
 * refused (any other 4xx: a wrong token or topic; retried too, slowly, so a fixed secret file
 * lets the backlog through). Error messages name the service, never the URL (a Telegram URL
 * holds the bot token).
 */

export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly details: { retryAfterMs?: number | undefined; refused?: boolean; body?: string } = {},
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/** The longest Retry-After honoured; a longer one is cut to it. */
const MAX_RETRY_AFTER_MS = 3_600_000;
/** What of a refusal's body goes into the error, at most (servers explain themselves there). */
const MAX_BODY_CHARS = 200;

export interface PostRequest {
  /** The service for messages (`ntfy.sh`, `Telegram`), never the URL. */
  service: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

/** POSTs and resolves with the answer's body when taken; throws DeliveryError otherwise. */
export async function post(request: PostRequest): Promise<string> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
  } catch (error) {
    throw new DeliveryError(`${request.service}: ${networkReason(error)}`);
  }
  const text = await response.text().catch(() => '');
  if (response.ok) return text;
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  const said = text.trim().slice(0, MAX_BODY_CHARS).replace(/\s+/g, ' ');
  throw new DeliveryError(`${request.service} answered HTTP ${response.status}${said ? `: ${said}` : ''}`, {
    retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
    refused: !retryable,
    body: text.slice(0, 4 * MAX_BODY_CHARS),
  });
}

function networkReason(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return 'no answer in time';
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** A Retry-After header (seconds, or an HTTP date) as ms from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - nowMs;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
