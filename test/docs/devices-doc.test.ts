/**
 * docs/devices.md: every homeostat config snippet (a ```yaml block starting with `version: 1`)
 * is one `validate` accepts, the snippets cover every MQTT actuator family, and the payloads the
 * page prints are the ones homeostat sends.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { shellySwitchSet, tasmotaPulseTimeValue } from '../../src/drivers/mqtt/switch-presets.js';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/devices.md', import.meta.url)), 'utf8');

/** The bodies of the page's ```yaml blocks that are homeostat configs, in order. */
const snippets = [...PAGE.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
  .map((match) => match[1]!)
  .filter((body) => body.startsWith('version: 1\n'));

function parsed(snippet: string, index: number): Config {
  const result = parseConfigText(snippet, `devices.md#${index + 1}`);
  assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  return result.config;
}

describe('docs/devices.md', () => {
  for (const [index, snippet] of snippets.entries()) {
    const nodeId = /^node: \{ id: (\w+) \}/m.exec(snippet)?.[1];
    test(`snippet ${index + 1} (node ${nodeId}) validates`, () => {
      parsed(snippet, index);
    });
  }

  test('the snippets cover mqtt_switch with every preset, and mqtt_level with esphome', () => {
    const used = new Set<string>();
    for (const [index, snippet] of snippets.entries()) {
      for (const actuator of Object.values(parsed(snippet, index).actuators)) {
        if ('preset' in actuator && actuator.preset !== undefined)
          used.add(`${actuator.kind} ${actuator.preset}`);
      }
    }
    assert.deepEqual([...used].sort(), [
      'mqtt_level esphome',
      'mqtt_switch esphome',
      'mqtt_switch shelly',
      'mqtt_switch tasmota',
      'mqtt_switch zigbee2mqtt',
    ]);
  });

  test('the Shelly ON frame it prints is the one homeostat sends with deadManS 600', () => {
    assert.ok(
      PAGE.includes(`\`${shellySwitchSet(0, true, 'homeostat-rpc/shellyplus1pm-a8032ab12345', 600)}\``),
      'Switch.Set frame as printed',
    );
  });

  test('the Tasmota PulseTime it prints for 600 s is the value homeostat sends', () => {
    assert.ok(PAGE.includes(`600 s → \`${tasmotaPulseTimeValue(600)}\``));
  });
});
