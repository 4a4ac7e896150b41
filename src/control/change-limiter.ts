/**
 * How many changes of desired state a loop accepts from outside (MQTT, HTTP): a token bucket
 * per loop. A person or Home Assistant changes a setpoint a few times a minute (a slider may
 * send a burst); a script gone wrong or an attacker sends thousands, and each change is a
 * committed row, an event and a new generation. Beyond the bucket a change is refused with the
 * reason (it still gets its result). Repeating the current value is not a change and costs nothing.
 */
export interface ChangeLimit {
  /** Changes accepted at once after a quiet period. */
  burst: number;
  /** Sustained changes per minute (the bucket refills at this rate). */
  perMinute: number;
}

/** Default: 10 changes at once, then one every 2 s. */
export const DEFAULT_CHANGE_LIMIT: Readonly<ChangeLimit> = Object.freeze({ burst: 10, perMinute: 30 });

export class ChangeLimiter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(private readonly limit: ChangeLimit = DEFAULT_CHANGE_LIMIT) {}

  /** Takes one change for `loop` at `nowMs`; false when its bucket is empty. */
  take(loop: string, nowMs: number): boolean {
    const bucket = this.buckets.get(loop) ?? { tokens: this.limit.burst, atMs: nowMs };
    // A wall clock set back must not drain the bucket: elapsed time is never negative.
    const elapsedMs = Math.max(0, nowMs - bucket.atMs);
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + (elapsedMs * this.limit.perMinute) / 60_000);
    bucket.atMs = nowMs;
    this.buckets.set(loop, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Forgets loops that are gone (after a reload), so the map stays bounded by the config. */
  retain(loops: readonly string[]): void {
    for (const loop of this.buckets.keys()) if (!loops.includes(loop)) this.buckets.delete(loop);
  }
}
