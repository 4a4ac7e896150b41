/**
 * The retained state JSON carries the runtime's `tuning` (which tuning is in force, the newest
 * stored one) beside the core's status, so MQTT readers see a proposal waiting to be accepted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { statePayload } from '../../src/mqtt/state-payload.js';
import type { PublishedLoopStatus } from '../../src/runtime/loop-reconciler.js';

const T0 = Date.UTC(2026, 10, 30, 12);

function status(): LoopStatus {
  return {
    loop: 'room',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 19.5,
    measuredAtMs: T0,
    output: 0.25,
    action: 'heating',
    generation: 4,
    observedGeneration: 4,
    actuators: { heater: { wanted: 1, observed: 1 } },
    conditions: [],
    updatedAtMs: T0,
  };
}

describe('state payload: tuning', () => {
  const cases: { name: string; tuning: PublishedLoopStatus['tuning']; want: unknown }[] = [
    {
      name: 'config gains, a proposal waiting',
      tuning: { active: 'config', latest: 2 },
      want: { active: 'config', latest: 2 },
    },
    { name: 'a version in force', tuning: { active: 3, latest: 3 }, want: { active: 3, latest: 3 } },
  ];
  for (const { name, tuning, want } of cases) {
    test(`given ${name}, the state JSON carries it`, () => {
      const published: PublishedLoopStatus = { ...status(), ...(tuning ? { tuning } : {}) };
      assert.deepEqual(statePayload(published).tuning, want);
    });
  }

  test('given a refused start, its time is ISO 8601 like every time in the state', () => {
    const published: PublishedLoopStatus = {
      ...status(),
      tuning: { active: 'config', refused: { reason: 'mode off', atMs: T0, generation: 5 } },
    };
    assert.deepEqual(statePayload(published).tuning, {
      active: 'config',
      refused: { reason: 'mode off', at: '2026-11-30T12:00:00.000Z', generation: 5 },
    });
  });

  test('given a status without tuning (a core status), the key is absent', () => {
    assert.equal('tuning' in statePayload(status()), false);
  });
});
