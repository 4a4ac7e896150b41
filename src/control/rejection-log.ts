import type { Clock, TimerHandle } from '../time/clock.js';

/** An event as the store records it (DesiredStore.recordEvent). */
export interface RejectionEvent {
  loop?: string;
  kind: 'command-rejected';
  source: string;
  message: string;
  data?: unknown;
}

/** One rejected command, as the bridge reports it. */
export interface Rejection {
  /** A configured loop, or undefined (unknown loop ids must not each get their own counter). */
  loop?: string;
  source: string;
  /** The whole message: "setpoint rejected: setpoint 99 is outside the limits 5..30". */
  message: string;
  requestId?: string;
}

export interface RejectionLogOptions {
  /** Writes one event; may throw (a full disk): the caller's guard logs it. */
  record: (event: RejectionEvent) => void;
  clock: Clock;
  /** Length of a coalescing window, ms. Default 60 000. */
  windowMs?: number;
  /** Most kinds of rejection tracked at once; more share one counter. Default 64. */
  maxKinds?: number;
}

/** Default coalescing window of rejected-command events, ms: one event per kind per minute. */
export const DEFAULT_REJECTION_WINDOW_MS = 60_000;

interface Window {
  loop?: string;
  source: string;
  /** Rejections of this kind since the last event, not written yet. */
  suppressed: number;
  lastMessage: string;
}

/**
 * The event log of rejected commands, coalesced: the first rejection of a kind (source, loop,
 * reason with its numbers and quoted values blanked) is recorded at once with its whole
 * message, the others of the same kind only as a count, one event per kind and window
 * ("999 more commands rejected like this in the last 60 s: …"). A flood of 20,000 bad commands
 * then writes a few rows instead of 20,000 (about 2 KB of SD-card writes each), while a
 * single mistake is still recorded at once and in full. Every command still gets its own
 * result on MQTT; only the event log is coalesced.
 */
export class RejectedCommandLog {
  private readonly windows = new Map<string, Window>();
  private timer: TimerHandle | undefined;
  private readonly windowMs: number;
  private readonly maxKinds: number;

  constructor(private readonly opts: RejectionLogOptions) {
    this.windowMs = opts.windowMs ?? DEFAULT_REJECTION_WINDOW_MS;
    this.maxKinds = opts.maxKinds ?? 64;
  }

  /** Notes one rejection: an event now if it is the first of its kind in the window, else a count. */
  note(rejection: Rejection): void {
    let key = `${rejection.source}\u0000${rejection.loop ?? ''}\u0000${reasonKind(rejection.message)}`;
    if (!this.windows.has(key) && this.windows.size >= this.maxKinds) key = OVERFLOW_KEY;
    const open = this.windows.get(key);
    if (open) {
      open.suppressed += 1;
      open.lastMessage = rejection.message;
      return;
    }
    this.windows.set(key, {
      ...(rejection.loop === undefined ? {} : { loop: rejection.loop }),
      source: rejection.source,
      suppressed: 0,
      lastMessage: rejection.message,
    });
    this.arm();
    this.opts.record({
      ...(rejection.loop === undefined ? {} : { loop: rejection.loop }),
      kind: 'command-rejected',
      source: rejection.source,
      message: rejection.message,
      ...(rejection.requestId === undefined ? {} : { data: { requestId: rejection.requestId } }),
    });
  }

  /** Writes the pending counts now and stops the timer (at shutdown). */
  stop(): void {
    if (this.timer) this.opts.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.sweep(false);
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = this.opts.clock.setTimer(() => {
      this.timer = undefined;
      this.sweep(true);
    }, this.windowMs);
  }

  /** End of a window: one event per kind with a count; kinds that stayed quiet are forgotten. */
  private sweep(rearm: boolean): void {
    const windowS = Math.round(this.windowMs / 1000);
    for (const [key, window] of this.windows) {
      if (window.suppressed === 0) {
        this.windows.delete(key);
        continue;
      }
      const count = window.suppressed;
      window.suppressed = 0;
      try {
        this.opts.record({
          ...(window.loop === undefined ? {} : { loop: window.loop }),
          kind: 'command-rejected',
          source: window.source,
          message: `${count} more command${count === 1 ? '' : 's'} rejected like this in the last ${windowS} s, the last: ${window.lastMessage}`,
          data: { count, windowS },
        });
      } catch {
        // The caller's record() reports storage errors; the count is lost, not the daemon.
      }
    }
    if (rearm && this.windows.size > 0) this.arm();
  }
}

const OVERFLOW_KEY = '\u0000overflow';

/**
 * What makes two rejections "the same": the message with quoted values and numbers blanked,
 * so `setpoint 31 is outside…` and `setpoint 32 is outside…`, or `unknown loop "a"` and
 * `unknown loop "b"`, count together.
 */
export function reasonKind(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\d+(?:\.\d+)?/g, '0');
}
