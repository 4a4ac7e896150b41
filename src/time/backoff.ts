/** Options of `backoffDelayMs`. */
export interface BackoffOptions {
  /** Delay after the first failure, ms (>= 0). */
  initialMs: number;
  /** Upper bound of the delay, ms. */
  maxMs: number;
  /** Growth per further failure (>= 1); default 2. */
  factor?: number;
  /**
   * Fraction 0..1 of the delay removed at random, so many loops failing on the same broker or
   * bus don't retry in lockstep; default 0 (deterministic). Never makes the delay exceed `maxMs`.
   */
  jitter?: number;
  /** Source of randomness in [0, 1); default `Math.random`. Injected by tests. */
  random?: () => number;
}

/**
 * Capped exponential backoff: the wait before retrying after `failures` consecutive
 * failures, `min(maxMs, initialMs × factor^(failures−1))`, minus jitter. 0 when `failures < 1`.
 * Pure apart from the injected `random`.
 */
export function backoffDelayMs(failures: number, opts: BackoffOptions): number {
  const { initialMs, maxMs, factor = 2, jitter = 0, random = Math.random } = opts;
  if (!(initialMs >= 0) || !(maxMs >= 0) || !(factor >= 1) || !(jitter >= 0 && jitter <= 1)) {
    throw new RangeError(
      `backoff: need initialMs >= 0, maxMs >= 0, factor >= 1, 0 <= jitter <= 1 (got ${JSON.stringify({ initialMs, maxMs, factor, jitter })})`,
    );
  }
  if (!(failures >= 1)) return 0;
  // factor ** n overflows to Infinity for long streaks; initialMs 0 would turn that into NaN.
  const uncappedMs = initialMs === 0 ? 0 : initialMs * factor ** (failures - 1);
  const delayMs = Math.min(maxMs, uncappedMs);
  return jitter === 0 ? delayMs : delayMs * (1 - jitter * random());
}
