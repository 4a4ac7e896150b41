import type { LoopStatus } from '../core/status.js';
import type { Condition } from '../core/types.js';

/** Conditions of the whole node that every loop shows. */
export type NodeConditionType = 'StorageHealthy' | 'ApiServing' | 'NodeIdUnique' | 'AlertsDelivering';
const NODE_CONDITION_ORDER: readonly NodeConditionType[] = [
  'StorageHealthy',
  'ApiServing',
  'NodeIdUnique',
  'AlertsDelivering',
];

/** A node condition's value: healthy or not, why, and what to do. */
export interface NodeHealth {
  healthy: boolean;
  reason: string;
  message: string;
}

/**
 * The conditions a loop shows that the runtime sets, not reconcile (LoopReconciler): `ConfigValid`
 * and the whole node's (`StorageHealthy` with a supervised store, `ApiServing` with the HTTP API
 * on; absent otherwise). Regulation never depends on them; they are shown so a person acts.
 */
export class LoopConditions {
  private configValidity: Condition | undefined;
  private readonly nodeConditions = new Map<NodeConditionType, Condition>();

  /**
   * A condition of the whole node: False names the problem and what to do. False when nothing
   * changed (nothing to publish). `generation`: the generation of the status shown.
   */
  setNodeCondition(type: NodeConditionType, health: NodeHealth, nowMs: number, generation: number): boolean {
    const status = health.healthy ? 'True' : 'False';
    const before = this.nodeConditions.get(type);
    if (before?.status === status && before.reason === health.reason && before.message === health.message)
      return false;
    this.nodeConditions.set(type, {
      type,
      status,
      reason: health.reason,
      message: health.message,
      lastTransitionMs: before && before.status === status ? before.lastTransitionMs : nowMs,
      observedGeneration: generation,
    });
    return true;
  }

  /** `ConfigValid`: False while the file on disk is invalid (the last good one runs). False when unchanged. */
  setConfigValidity(
    valid: boolean,
    message: string,
    nowMs: number,
    reason: string | undefined,
    generation: number,
  ): boolean {
    const status = valid ? 'True' : 'False';
    const unchanged = this.configValidity?.status === status && this.configValidity.message === message;
    if (unchanged) return false;
    this.configValidity = {
      type: 'ConfigValid',
      status,
      reason: reason ?? (valid ? 'Applied' : 'Invalid'),
      message,
      lastTransitionMs:
        this.configValidity && this.configValidity.status === status
          ? this.configValidity.lastTransitionMs
          : nowMs,
      observedGeneration: generation,
    };
    return true;
  }

  /** `status` with these conditions appended after reconcile's, in a fixed order. */
  applyTo<S extends LoopStatus>(status: S): S {
    const nodeConditions = NODE_CONDITION_ORDER.map((type) => this.nodeConditions.get(type));
    for (const extra of [this.configValidity, ...nodeConditions]) {
      if (!extra) continue;
      const conditions = status.conditions.filter((c) => c.type !== extra.type);
      status = {
        ...status,
        conditions: [...conditions, { ...extra, observedGeneration: status.generation }],
      };
    }
    return status;
  }
}
