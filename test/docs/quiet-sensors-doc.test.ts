/**
 * docs/quiet-sensors.md stays true: its config snippet is accepted by `validate` (inside a loop
 * that uses it), and the messages it quotes are the ones the code writes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfigText } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import { freshnessOf } from '../../src/core/liveness.js';
import { readingCadenceProblem } from '../../src/core/tuning/reading-cadence.js';
import type { Reading } from '../../src/core/types.js';
import { DEFAULT_MAX_QUIET_S } from '../../src/kinds/sensors/mqtt-liveness.js';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/quiet-sensors.md', import.meta.url)), 'utf8');
const SNIPPET = /^```yaml\n([\s\S]*?)^```$/m.exec(PAGE)?.[1] ?? '';
const VIA = 'availability zigbee2mqtt/fermenter_probe/availability, field last_seen';
const NOW_MS = Date.UTC(2026, 0, 1, 12);
const min = (minutes: number) => minutes * 60_000;

function configWith(sensorsYaml: string) {
  return parseConfigText(`
version: 1
node: { id: cellar }
mqtt: {}
${sensorsYaml}
actuators:
  heat_mat: { kind: mqtt_switch, preset: tasmota, device: heat_mat_plug }
loops:
  fermenter: { sensor: beer_temp, raise: heat_mat, setpoint: 19, limits: { min: 0, max: 28 }, controller: { type: hysteresis } }
`);
}

function reading(ageMs: number, liveness: Partial<NonNullable<Reading['liveness']>>): Reading {
  return {
    value: 18,
    atMs: NOW_MS - ageMs,
    liveness: { via: VIA, maxQuietMs: DEFAULT_MAX_QUIET_S * 1000, ...liveness },
  };
}

describe('docs/quiet-sensors.md', () => {
  test('the config snippet validates in a loop, and states the default maxQuietS', () => {
    assert.match(SNIPPET, /^sensors:\n {2}beer_temp:/);
    const loaded = configWith(SNIPPET);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
    assert.ok(PAGE.includes(`maxQuietS: ${DEFAULT_MAX_QUIET_S}                  # the default`));
  });

  test('the SensorHealthy messages it quotes are the rule’s (core/liveness.ts)', () => {
    const staleAfterMs = 180_000;
    const quiet = freshnessOf(reading(min(22), { seenAtMs: NOW_MS - 40_000 }), NOW_MS, staleAfterMs);
    const offline = freshnessOf(reading(min(5), { offlineSinceMs: NOW_MS - min(3) }), NOW_MS, staleAfterMs);
    const pastBound = freshnessOf(
      reading(DEFAULT_MAX_QUIET_S * 1000 + 1, { seenAtMs: NOW_MS }),
      NOW_MS,
      staleAfterMs,
    );
    assert.ok(quiet.fresh && quiet.quiet !== undefined);
    assert.ok(!offline.fresh && !pastBound.fresh);
    for (const message of [quiet.quiet, offline.message, pastBound.message]) {
      assert.ok(PAGE.includes(`\`${message}\``), `the page quotes: ${message}`);
    }
  });

  test('the autotune refusals it quotes are the ones reading-cadence.ts gives', () => {
    for (const [extra, sensorsYaml] of [
      ['liveness', SNIPPET],
      [
        'slow',
        'sensors:\n  beer_temp: { kind: mqtt, topic: zigbee2mqtt/fermenter_probe, field: temperature, periodS: 300 }',
      ],
    ] as const) {
      const loaded = configWith(sensorsYaml);
      assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
      const problem = readingCadenceProblem(toLoopSpec(loaded.config, 'fermenter'), undefined);
      assert.ok(problem !== undefined, extra);
      assert.ok(PAGE.includes(`\`${problem}\``), `the page quotes: ${problem}`);
    }
  });
});
