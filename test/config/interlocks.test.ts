/** Loop interlocks in the config: defaults, references, and the loop spec they become. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';

const GREENHOUSE = fs.readFileSync('config/greenhouse-pi.yaml', 'utf8');

test('given the greenhouse example, the window interlock pauses at 1 and ages with the switch', () => {
  const loaded = parseConfigText(GREENHOUSE);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const spec = toLoopSpec(loaded.config, 'greenhouse');
  const window = loaded.config.sensors.window!;
  assert.deepEqual(spec.interlocks, [
    { sensorId: 'window', pauseWhen: 1, staleAfterMs: window.staleAfterS * 1000 },
  ]);
});

test('pauseWhen defaults to 1; no interlocks by default', () => {
  const loaded = parseConfigText(GREENHOUSE.replace('        pauseWhen: 1\n', ''));
  assert.ok(loaded.ok);
  assert.equal(loaded.config.loops.greenhouse?.interlocks[0]?.pauseWhen, 1);
  const demo = parseConfigText(fs.readFileSync('config/demo.yaml', 'utf8'));
  assert.ok(demo.ok);
  assert.deepEqual(demo.config.loops.room?.interlocks, []);
});

test('an interlock naming an unknown sensor is a path: message error', () => {
  const loaded = parseConfigText(GREENHOUSE.replace('      - sensor: window', '      - sensor: door'));
  assert.equal(loaded.ok, false);
  assert.ok(
    !loaded.ok && loaded.errors.includes('loops.greenhouse.interlocks[0].sensor: unknown sensor "door"'),
    loaded.ok ? '' : loaded.errors.join('\n'),
  );
});
