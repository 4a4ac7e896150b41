/**
 * What the event-loop benchmarks (soak, priority) share: the machine's load as CPU hogs, a
 * percentile, and why a probe window was late.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { ProbeSample } from '../faults/support/daemon.js';

/** A probe window (100 ms) delayed more than this counts as a stall, ms. */
export const STALL_MS = 100;

export type StallCause = 'gc' | 'busy' | 'not scheduled';

/**
 * Why a probe window was late: a GC pause as long as most of it, the process busy on CPU for
 * most of it (its own synchronous work), or neither (the machine ran other processes).
 */
export function stallCause(sample: ProbeSample): StallCause {
  if ((sample.gcMaxMs ?? 0) >= 0.5 * sample.maxDelayMs) return 'gc';
  if ((sample.cpuMs ?? 0) >= 0.6 * sample.maxDelayMs) return 'busy';
  return 'not scheduled';
}

/** A busy loop in a child process: the machine's load, not the daemon's. */
export function startHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
