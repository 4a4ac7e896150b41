import type { LoopStatus } from '../core/status.js';
import type { TimerHandle } from '../time/clock.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import type { BridgePublisher } from './bridge-publish.js';
import { stateFingerprint, statePayload } from './state-payload.js';

type StatusOptions = Pick<MqttBridgeOptions, 'connection' | 'topics' | 'control' | 'clock' | 'heartbeatMs'>;

/**
 * Each loop's retained state: published when it changed, else once per heartbeat, so a
 * subscriber sees the daemon is alive without a flood of identical states every cycle.
 */
export class StatusPublisher {
  /** What was last published per loop, and when (clock ms). */
  private readonly lastState = new Map<string, { fingerprint: string; atMs: number }>();
  private heartbeatTimer: TimerHandle | undefined;
  private readonly heartbeatMs: number;

  constructor(
    private readonly opts: StatusOptions,
    private readonly output: BridgePublisher,
  ) {
    this.heartbeatMs = opts.heartbeatMs;
  }

  /** A loop's new status: published when it changed, else at the heartbeat (`force`: now). */
  publish(status: LoopStatus, force = false): void {
    const payload = statePayload(status);
    const fingerprint = stateFingerprint(payload);
    const nowMs = this.opts.clock.nowMs();
    const last = this.lastState.get(status.loop);
    if (!force && last && last.fingerprint === fingerprint && nowMs - last.atMs < this.heartbeatMs) return;
    if (!this.opts.connection.connected) return;
    this.lastState.set(status.loop, { fingerprint, atMs: nowMs });
    this.output.publish(this.opts.topics.loopState(status.loop), JSON.stringify(payload), true);
  }

  /** Every loop's latest status (`force`: even unchanged ones, after a (re)connect). */
  publishAll(force: boolean): void {
    for (const status of this.opts.control.statuses()) this.publish(status, force);
  }

  /** A removed loop: its retained state was cleared, so nothing of it is remembered. */
  forget(loop: string): void {
    this.lastState.delete(loop);
  }

  startHeartbeat(): void {
    const tick = () => {
      this.publishAll(false);
      this.heartbeatTimer = this.opts.clock.setTimer(tick, this.heartbeatMs);
    };
    this.heartbeatTimer = this.opts.clock.setTimer(tick, this.heartbeatMs);
  }

  stopHeartbeat(): void {
    if (this.heartbeatTimer) this.opts.clock.clearTimer(this.heartbeatTimer);
  }
}
