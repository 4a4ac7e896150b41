/**
 * The `liveness` block an MQTT sensor kind may have: how its device shows it is alive apart
 * from its value (drivers/mqtt/liveness.ts), and how long a quiet value stays in force then
 * (core/liveness.ts). Shared by every MQTT sensor kind so the block reads the same in each.
 */
import { z } from 'zod';
import {
  AVAILABILITY_PRESET_NAMES,
  availabilityTopic,
  bridgeStateTopic,
} from '../../drivers/mqtt/availability.js';
import type { LivenessOptions } from '../../drivers/mqtt/liveness.js';
import { fieldPath, plainTopic } from '../fields.js';

/**
 * maxQuietS when the block does not give it, s: 90 min. A steady fermenter's probe (Aqara,
 * SNZB-02) checks in about hourly; a bound at one hour raced that check-in (one a little late
 * sent the loop safe), so the default leaves half a check-in of margin.
 */
export const DEFAULT_MAX_QUIET_S = 5400;

export const livenessSchema = z
  .strictObject({
    preset: z
      .enum(AVAILABILITY_PRESET_NAMES)
      .optional()
      .describe(
        'The device family whose availability topic to read, with device: zigbee2mqtt (<device>/availability, ' +
          '{"state":"online"} or legacy online; enable availability in Zigbee2MQTT; and <base>/bridge/state, ' +
          'base the first level of device: Zigbee2MQTT offline counts as the device offline), tasmota (tele/<device>/LWT ' +
          'Online/Offline), esphome (<device>/status online/offline), shelly (<device>/online true/false). ' +
          'Default: none.',
      ),
    device: plainTopic
      .optional()
      .describe(
        "With preset: zigbee2mqtt, the device's topic with the base (zigbee2mqtt/fermenter_probe); tasmota, " +
          'its Topic; esphome and shelly, its topic prefix. Default: none; required with preset.',
      ),
    availabilityTopic: plainTopic
      .optional()
      .describe('An availability topic of your own (online/offline, true/false). Default: from the preset.'),
    heartbeatTopic: plainTopic
      .optional()
      .describe(
        'A topic on which any message shows the device alive (Tasmota tele/<x>/STATE); a retained one does ' +
          'not (the broker resends it at every reconnect). Default: none.',
      ),
    lastSeenField: fieldPath
      .optional()
      .describe(
        "Dot path of a last-seen time in the device's own messages, ISO 8601 or epoch ms (Zigbee2MQTT " +
          'last_seen with advanced.last_seen set): it also ages a retained value honestly. Default: none.',
      ),
    maxQuietS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'How long the last value stays in force while the device is seen alive (within staleAfterS), ' +
          `seconds; then the loop goes safe as at staleAfterS. Default ${DEFAULT_MAX_QUIET_S}.`,
      ),
  })
  .superRefine((block, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (block.preset !== undefined && block.device === undefined)
      issue('device', `required with preset ${block.preset}`);
    if (block.device !== undefined && block.preset === undefined) issue('preset', 'required with device');
    if (block.preset !== undefined && block.availabilityTopic !== undefined) {
      issue('availabilityTopic', 'give either preset and device or availabilityTopic, not both');
    }
    const sources = [block.preset, block.availabilityTopic, block.heartbeatTopic, block.lastSeenField];
    if (sources.every((source) => source === undefined)) {
      issue(
        'preset',
        'give how the device shows it is alive: preset and device, availabilityTopic, heartbeatTopic or lastSeenField',
      );
    }
  })
  .describe(
    'How the device shows it is alive apart from its value, for sensors that report only on change (Zigbee ' +
      'probes): while it is seen alive, the last value stays in force up to maxQuietS instead of going stale ' +
      'at staleAfterS; offline sends the loop safe at once. Default: none, the value alone shows it.',
  );

export type LivenessSection = z.output<typeof livenessSchema>;

/** What the driver is built from; `staleAfterS` is the sensor's (maxQuietS must exceed it). */
export function livenessOptions(block: LivenessSection): LivenessOptions {
  const { preset, device } = block;
  const fromPreset = preset !== undefined && device !== undefined ? { preset, device } : undefined;
  return {
    availabilityTopic:
      block.availabilityTopic ??
      (fromPreset ? availabilityTopic(fromPreset.preset, fromPreset.device) : undefined),
    // Zigbee2MQTT's device availability outlives a crash of Zigbee2MQTT: its bridge state does not.
    bridgeStateTopic: fromPreset ? bridgeStateTopic(fromPreset.preset, fromPreset.device) : undefined,
    heartbeatTopic: block.heartbeatTopic,
    lastSeenField: block.lastSeenField,
    maxQuietMs: (block.maxQuietS ?? DEFAULT_MAX_QUIET_S) * 1000,
  };
}
