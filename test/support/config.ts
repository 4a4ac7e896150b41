/**
 * Config builders for tests: parse YAML text or a plain object through the real loader and
 * schema (so a test never holds a config the daemon would refuse), a minimal simulated loop,
 * and the demo config with edits.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseConfigText, validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';

/** config/demo.yaml of this checkout. */
export const DEMO_CONFIG_PATH = fileURLToPath(new URL('../../config/demo.yaml', import.meta.url));

/**
 * The config that YAML `text` (or an already-decoded object) describes, through the same
 * path as the daemon (`parseConfigText` / `validateConfig`); fails the test with the
 * loader's messages if it is invalid.
 */
export function validConfig(source: string | object): Config {
  const loaded = typeof source === 'string' ? parseConfigText(source) : validateConfig(source);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  return loaded.config;
}

/** The loader's error lines for a config that must be invalid (fails the test if it is valid). */
export function configErrors(source: string | object): string[] {
  const loaded = typeof source === 'string' ? parseConfigText(source) : validateConfig(source);
  assert.ok(!loaded.ok, 'expected the config to be invalid');
  return loaded.errors;
}

/**
 * The smallest valid config with one loop: plant `p`, simulated sensor `t`, simulated relay
 * `heater`, loop `room` (PID, setpoint 20, limits 5..30). `loopExtra` is appended inside the
 * loop (indent it four spaces), `extra` at the top level (more sensors, loops…).
 */
export function minimalSimConfigText(
  opts: { loopExtra?: string; extra?: string; nodeId?: string } = {},
): string {
  return `
version: 1
node: { id: ${opts.nodeId ?? 'pi'} }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
sensors:
  t: { kind: simulated, plant: p }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 }
loops:
  room:
    sensor: t
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
${opts.loopExtra ?? ''}
${opts.extra ?? ''}`;
}

/** {@link minimalSimConfigText}, parsed. */
export function minimalSimConfig(opts: Parameters<typeof minimalSimConfigText>[0] = {}): Config {
  return validConfig(minimalSimConfigText(opts));
}

/**
 * The demo config's text after `edit` (a yaml Document: `doc.setIn`, `doc.deleteIn`…; comments
 * are kept). Without an edit, the demo as shipped.
 */
export function demoConfigText(edit?: (doc: YAML.Document) => void): string {
  const doc = YAML.parseDocument(readFileSync(DEMO_CONFIG_PATH, 'utf8'));
  edit?.(doc);
  return doc.toString();
}

/** {@link demoConfigText}, parsed. */
export function demoConfig(edit?: (doc: YAML.Document) => void): Config {
  return validConfig(demoConfigText(edit));
}

/** The demo config with `mqtt.<key>` set for each entry of `mqtt` (e.g. `{ url, username }`). */
export function demoConfigWithMqtt(mqtt: Record<string, unknown>): Config {
  return demoConfig((doc) => {
    for (const [key, value] of Object.entries(mqtt)) doc.setIn(['mqtt', key], value);
  });
}
