/**
 * The safety monitors' config parts, by the name of their pure part (core/monitors/index.ts):
 * a core monitor without its config part here fails the type-check. The loop monitors' blocks
 * are the loop's keys (config/schema/loop.ts spreads them), checked by config/schema/loop-checks.ts
 * and converted by config/to-loop-spec.ts; the actuator monitors' fields are the kinds'.
 */
import type { MonitorName } from '../../core/monitors/index.js';
import { cutoffConfig } from './cutoff.js';
import { maxOnTimeConfig } from './max-on-time.js';
import { runawayWatchConfig } from './runaway-watch.js';
import { startCapConfig } from './start-cap.js';
import { stuckWatchConfig } from './stuck-watch.js';

export const MONITOR_CONFIGS = {
  cutoff: cutoffConfig,
  maxOnTime: maxOnTimeConfig,
  stuckWatch: stuckWatchConfig,
  runawayWatch: runawayWatchConfig,
  startCap: startCapConfig,
} as const satisfies Record<MonitorName, { scope: 'loop' | 'actuator'; key: string }>;

type Configs = typeof MONITOR_CONFIGS;
type LoopMonitorName = {
  [N in keyof Configs]: Configs[N]['scope'] extends 'loop' ? N : never;
}[keyof Configs];
type ActuatorMonitorName = Exclude<keyof Configs, LoopMonitorName>;

/** The loop monitors, in table order. */
export const LOOP_MONITORS = Object.values(MONITOR_CONFIGS).filter(
  (monitor) => monitor.scope === 'loop',
) as Configs[LoopMonitorName][];

/** The actuator monitors: their fields limit the time an actuator is away from its safe state. */
export const ACTUATOR_MONITORS = Object.values(MONITOR_CONFIGS).filter(
  (monitor) => monitor.scope === 'actuator',
) as Configs[ActuatorMonitorName][];

/** The loop monitors' blocks, as keys of the loop's schema (in table order). */
export const loopMonitorFields = Object.fromEntries(
  LOOP_MONITORS.map((monitor) => [monitor.key, monitor.schema]),
) as { [N in LoopMonitorName as Configs[N]['key']]: Configs[N]['schema'] };
