import { backoffDelayMs } from '../time/backoff.js';

/**
 * Reconnect timing of the MQTT connection. MQTT.js only knows a fixed `reconnectPeriod`, so
 * after a broker restart every homeostat on the network would retry in lockstep, forever at
 * the same rate; this grows the wait and spreads it.
 */
export interface ReconnectBackoff {
  /** Wait before the first attempt after a connection is lost or refused, ms. Default 1000. */
  initialMs: number;
  /** Upper bound of the wait, ms. Default 60000. */
  maxMs: number;
  /** Fraction 0..1 of the wait removed at random (never adds to it). Default 0.2. */
  jitter: number;
}

export const DEFAULT_RECONNECT_BACKOFF: Readonly<ReconnectBackoff> = Object.freeze({
  initialMs: 1_000,
  maxMs: 60_000,
  jitter: 0.2,
});

/**
 * Wait before reconnect attempt number `attempt` (1 = the first attempt after the connection
 * was lost or refused): `min(maxMs, initialMs × 2^(attempt−1)) × (1 − jitter × random())`.
 * 0 for `attempt < 1`. Pure apart from `random` (values in [0, 1), default `Math.random`).
 */
export function reconnectDelayMs(
  attempt: number,
  backoff: ReconnectBackoff = DEFAULT_RECONNECT_BACKOFF,
  random: () => number = Math.random,
): number {
  return backoffDelayMs(attempt, {
    initialMs: backoff.initialMs,
    maxMs: backoff.maxMs,
    factor: 2,
    jitter: backoff.jitter,
    random,
  });
}
