/** applyConfig (daemon/store.ts) hands each PID loop's gains to the store: a file that changes them sets a tuning aside. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { applyConfig } from '../../src/daemon/store.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { memoryStore } from '../support/store.js';

const DEMO = fs.readFileSync('config/demo.yaml', 'utf8');

function apply(store: ReturnType<typeof memoryStore>, text: string): void {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  applyConfig(store, loaded.config, text);
}

const TUNING = { gains: { kp: 0.9, tiS: 700, tdS: 0 } };

test('a tuning in force stays through a reload that keeps the gains, and gives way when the file changes kp', (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const store = memoryStore(clock);
  t.after(() => store.close());
  apply(store, DEMO);
  store.desired.recordTuning('room', TUNING, { apply: true, source: 'autotune' });
  assert.equal(store.desired.desired('room')?.tuning?.version, 1);

  apply(store, DEMO.replace('setpoint: 20', 'setpoint: 21'));
  assert.equal(store.desired.desired('room')?.tuning?.version, 1, 'same gains: the tuning stays');

  apply(store, DEMO.replace('setpoint: 20', 'setpoint: 21').replace('kp: 0.75 #', 'kp: 0.6 #'));
  assert.equal(store.desired.desired('room')?.tuning, undefined, "the file's new kp is in force");
  assert.equal(store.desired.desired('fermenter')?.tuning, undefined);
});
