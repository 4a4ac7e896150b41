/**
 * What one install step did, printed as one line: `created /etc/homeostat (0750 root:homeostat)`.
 * "unchanged" on every line is what a second run prints.
 */
export type Change = 'created' | 'updated' | 'unchanged' | 'removed' | 'kept' | 'skipped';

export interface Step {
  change: Change;
  /** A path, or `user homeostat`, `group gpio`, `homeostat.service`. */
  what: string;
  detail?: string;
}

export function formatStep(step: Step): string {
  return `${step.change} ${step.what}${step.detail === undefined ? '' : ` (${step.detail})`}`;
}

/** True when any step changed something (the service then needs a restart). */
export function changedAny(steps: readonly Step[]): boolean {
  return steps.some(
    (step) => step.change === 'created' || step.change === 'updated' || step.change === 'removed',
  );
}
