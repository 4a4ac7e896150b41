/**
 * docs/mqtt-contacts.md: every ```yaml sensor snippet is an mqtt_binary section `validate`
 * accepts as a heating loop's interlock, and the messages its table quotes are the ones the
 * core gives (core/interlock.ts, core/liveness.ts) for the same readings.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfigText } from '../../src/config/load.js';
import { trippedInterlock } from '../../src/core/interlock.js';
import type { Reading } from '../../src/core/types.js';
import { DeviceLivenessTracker } from '../../src/drivers/mqtt/liveness.js';
import { livenessOptions } from '../../src/kinds/sensors/mqtt-liveness.js';
import { FakeTransport } from '../drivers/mqtt/fake-transport.js';

const PAGE = fileURLToPath(new URL('../../docs/mqtt-contacts.md', import.meta.url));
const markdown = readFileSync(PAGE, 'utf8');

/** The page's ```yaml blocks that define one sensor (`<id>:` then `kind: mqtt_binary`). */
const sensorSnippets = [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
  .map((match) => match[1]!)
  .filter((body) => /^\w+:\n {2}kind: mqtt_binary/.test(body));

/** A heated room paused by the snippet's sensor. */
function configWith(snippet: string): string {
  const id = /^(\w+):/.exec(snippet)?.[1] ?? '';
  return `
version: 1
node: { id: doc }
mqtt: { url: "mqtt://127.0.0.1:1883" }
sensors:
  living_temp: { kind: mqtt, topic: zigbee2mqtt/living_probe, field: temperature }
${snippet.replace(/^/gm, '  ')}
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: heater_plug }
loops:
  living:
    sensor: living_temp
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 25 }
    interlocks: [{ sensor: ${id} }]
    controller: { type: hysteresis }
`;
}

/** The message after "paused, actuators safe: " for each case of the page's table. */
function tableMessage(caseName: string): string {
  const row = new RegExp(`^\\| ${caseName} \\| \`(.+)\` \\|$`, 'm').exec(markdown);
  assert.ok(row, `no row "${caseName}" in the table`);
  return row[1]!;
}

describe('docs/mqtt-contacts.md', () => {
  test('has a snippet per preset and one without', () => assert.equal(sensorSnippets.length, 5));

  for (const snippet of sensorSnippets) {
    test(`snippet ${/^(\w+):/.exec(snippet)?.[1]} validates as an interlock`, () => {
      const result = parseConfigText(configWith(snippet), 'mqtt-contacts.md');
      assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    });
  }

  const nowMs = 10_000_000_000;
  const via = 'availability zigbee2mqtt/living_window/availability';
  /** The via the tracker writes with Zigbee2MQTT's last will in force (not typed out by hand). */
  const bridgeDownVia = (() => {
    const transport = new FakeTransport();
    const live = new DeviceLivenessTracker(
      transport,
      livenessOptions({ preset: 'zigbee2mqtt', device: 'zigbee2mqtt/living_window' }),
      () => nowMs,
      () => {},
    );
    live.start();
    transport.deliver('zigbee2mqtt/bridge/state', '{"state":"offline"}', { retain: true });
    return live.current().via;
  })();
  const spec = { interlocks: [{ sensorId: 'living_window', pauseWhen: 1, staleAfterMs: 7_200_000 }] };
  const cases: [string, Reading | undefined][] = [
    ['open', { value: 1, atMs: nowMs }],
    ['no state yet', undefined],
    [
      'garbage',
      {
        value: Number.NaN,
        atMs: nowMs,
        whyNotANumber:
          'zigbee2mqtt/living_window: field contact is "banana", neither on (false) nor off (true)',
      },
    ],
    [
      'offline',
      {
        value: Number.NaN,
        atMs: nowMs - 60_000,
        liveness: { via, maxQuietMs: 90_000_000, offlineSinceMs: nowMs - 12_000 },
      },
    ],
    [
      'Zigbee2MQTT itself offline',
      {
        value: Number.NaN,
        atMs: nowMs - 60_000,
        liveness: { via: bridgeDownVia, maxQuietMs: 90_000_000, offlineSinceMs: nowMs - 12_000 },
      },
    ],
    [
      'back online, no state since',
      {
        value: Number.NaN,
        atMs: nowMs - 60_000,
        liveness: { via, maxQuietMs: 90_000_000, seenAtMs: nowMs },
        whyNotANumber: `device back online; no state since it went offline (${via})`,
      },
    ],
    [
      'stale, device not seen',
      { value: 0, atMs: nowMs - 7_260_000, liveness: { via, maxQuietMs: 90_000_000 } },
    ],
    [
      'quiet too long',
      { value: 0, atMs: nowMs - 90_000_001, liveness: { via, maxQuietMs: 90_000_000, seenAtMs: nowMs } },
    ],
  ];
  for (const [caseName, reading] of cases) {
    test(`given the case "${caseName}", then the core says what the table quotes`, () => {
      const tripped = trippedInterlock(spec, { living_window: reading }, nowMs);
      assert.equal(tripped?.message, tableMessage(caseName));
    });
  }
});
