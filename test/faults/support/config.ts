import type YAML from 'yaml';
import { demoConfigText } from '../../integration/helpers.js';

/**
 * Configs of the fault scenarios: the demo (three loops on simulated plants) with the broker
 * and storage settings a scenario needs. Topics follow the contract: homeostat/<node>/<loop>/….
 */

export const BASE = 'homeostat/demo';
export const LOOPS = ['fermenter', 'greenhouse_humidity', 'room'] as const;
export const stateTopic = (loop: string) => `${BASE}/${loop}/state`;
export const resultTopic = (loop: string) => `${BASE}/${loop}/result`;
export const setTopic = (loop: string) => `${BASE}/${loop}/set`;
export const setpointTopic = (loop: string) => `${BASE}/${loop}/setpoint/set`;
export const modeTopic = (loop: string) => `${BASE}/${loop}/mode/set`;
export const faultResetTopic = (loop: string) => `${BASE}/${loop}/fault/reset`;

export interface FaultConfig {
  /** The private broker's URL; without it the config has no mqtt block. */
  brokerUrl?: string;
  /** storage.memoryFlushS; default 1 (a commit every simulated second: many writes to disturb). */
  memoryFlushS?: number;
  edit?: (doc: YAML.Document) => void;
}

export function faultConfigText(opts: FaultConfig = {}): string {
  return demoConfigText((doc) => {
    if (opts.brokerUrl) doc.setIn(['mqtt', 'url'], opts.brokerUrl);
    else doc.delete('mqtt');
    doc.set('storage', { memoryFlushS: opts.memoryFlushS ?? 1 });
    opts.edit?.(doc);
  });
}

/** A unique request id per command of a test run. */
let requestNo = 0;
export function nextRequestId(prefix = 'r'): string {
  requestNo += 1;
  return `${prefix}-${requestNo}`;
}
