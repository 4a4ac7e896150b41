/**
 * The safety monitors, one module each, in the order their faults take precedence (the most
 * urgent first: a value past its absolute limit). safety-monitors.ts runs this table; a new
 * monitor is its module here, one line below, its config part in kinds/monitors/ (registered
 * under the same name; the type-check fails until it is) and its tests.
 */
import { cutoffMonitor } from './cutoff.js';
import { maxOnTimeMonitor } from './max-on-time.js';
import { runawayWatchMonitor } from './runaway-watch.js';
import { startCapMonitor } from './start-cap.js';
import { stuckWatchMonitor } from './stuck-watch.js';
import type { AnySafetyMonitor } from './types.js';

export const SAFETY_MONITORS = [
  cutoffMonitor,
  maxOnTimeMonitor,
  stuckWatchMonitor,
  runawayWatchMonitor,
  startCapMonitor,
] as const satisfies readonly AnySafetyMonitor[];

/** A monitor's name: the key its config part is registered under. */
export type MonitorName = (typeof SAFETY_MONITORS)[number]['name'];
