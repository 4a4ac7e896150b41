/**
 * Defaults that are runtime policy rather than per-loop config (documented in docs/how-a-loop-works.md).
 * Here rather than in config because an MQTT relay's dead man's switch is checked against the
 * keep-alive, and kinds do not import config; config/to-loop-spec.ts re-exports it.
 */
export const LOOP_POLICY = {
  /** Re-assert a confirmed actuator state this often, ms. */
  keepAliveMs: 300_000,
  /** First retry of an unconfirmed command, ms (doubles up to keepAliveMs). */
  retryInitialMs: 5_000,
};
