/**
 * What raises an alert: each kind's streak starts when its condition shows, is raised once it
 * lasted its delay, and is resolved (or, never raised, just ended) when it clears; once per
 * streak, on monotonic time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AlertTrackerState,
  type AlertTransition,
  EMPTY_ALERT_STATE,
  forgetLoops,
  type LoopAlertRules,
  nextDueMs,
  raiseDue,
  trackLoopStatus,
  trackPeer,
} from '../../src/alerts/rules.js';
import type { LoopStatus } from '../../src/core/status.js';
import type { Condition } from '../../src/core/types.js';
import { profileStatus, type Shown, statusOf } from './statuses.js';

const RULES: LoopAlertRules = {
  delaysMs: { latched: 0, faulted: 60_000, unconfirmed: 120_000, interlock: 1_800_000, storage: 60_000 },
  autotune: true,
  profile: true,
};

const HEALTHY: Shown = {
  Faulted: { status: 'False', reason: 'NoFault', message: 'no fault' },
  ActuatorConfirmed: { status: 'True', reason: 'Confirmed', message: 'ok' },
  StorageHealthy: { status: 'True', reason: 'Healthy', message: 'ok' },
};
const STALE: Shown = {
  ...HEALTHY,
  Faulted: {
    status: 'True',
    reason: 'SensorStale',
    message: 'actuators held at their safe state: reading stale',
  },
};
const LATCHED: Shown = {
  ...HEALTHY,
  Faulted: { status: 'True', reason: 'LatchedHeatingIneffective', message: 'held until reset: no effect' },
};

/** Feeds `steps` ([ms, status]) in order; every transition with its time. */
function run(
  steps: Array<[atMs: number, status: LoopStatus]>,
  rules = RULES,
  state: AlertTrackerState = EMPTY_ALERT_STATE,
): { state: AlertTrackerState; seen: string[] } {
  const { transitions: _, ...result } = runWith(steps, rules, state);
  return result;
}

/** `run`, with the transitions themselves. */
function runWith(
  steps: Array<[atMs: number, status: LoopStatus]>,
  rules = RULES,
  state: AlertTrackerState = EMPTY_ALERT_STATE,
): { state: AlertTrackerState; seen: string[]; transitions: AlertTransition[] } {
  const seen: string[] = [];
  const transitions: AlertTransition[] = [];
  for (const [atMs, status] of steps) {
    const tracked = trackLoopStatus(state, status, rules, atMs);
    state = tracked.state;
    transitions.push(...tracked.transitions);
    for (const t of tracked.transitions) seen.push(`${atMs} ${shown(t)}`);
  }
  return { state, seen, transitions };
}

function shown(t: AlertTransition): string {
  if (t.phase === 'event') return `event ${t.kind} ${t.outcome}`;
  if (t.phase === 'resolved') return `resolved ${t.streak.kind} after ${t.lastedMs}`;
  return `${t.phase} ${t.streak.kind}`;
}

describe('trackLoopStatus', () => {
  const table: Array<[name: string, steps: Array<[number, LoopStatus]>, expected: string[]]> = [
    [
      'a sensor fault shorter than faultedForS: started and ended, never raised',
      [
        [0, statusOf(STALE)],
        [59_000, statusOf(STALE)],
        [60_000 - 1, statusOf(HEALTHY)],
      ],
      ['0 started faulted', '59999 ended faulted'],
    ],
    [
      'a sensor fault that lasts: raised once at its delay, resolved once when it clears',
      [
        [0, statusOf(STALE)],
        [30_000, statusOf(STALE)],
        [60_000, statusOf(STALE)],
        [90_000, statusOf(STALE)],
        [300_000, statusOf(HEALTHY)],
        [310_000, statusOf(HEALTHY)],
      ],
      ['0 started faulted', '60000 raised faulted', '300000 resolved faulted after 300000'],
    ],
    [
      'a latched fault (delay 0): raised in the status that shows it',
      [
        [0, statusOf(HEALTHY)],
        [5_000, statusOf(LATCHED)],
        [10_000, statusOf(LATCHED)],
      ],
      ['5000 started latched', '5000 raised latched'],
    ],
    [
      'a stale reading that turns into a NaN one: the same streak, not a second alert',
      [
        [0, statusOf(STALE)],
        [
          40_000,
          statusOf({ ...HEALTHY, Faulted: { status: 'True', reason: 'SensorNotFinite', message: 'NaN' } }),
        ],
        [70_000, statusOf(STALE)],
      ],
      ['0 started faulted', '70000 raised faulted'],
    ],
    [
      'an actuator not confirmed for 2 min',
      [
        [
          0,
          statusOf({
            ...HEALTHY,
            ActuatorConfirmed: { status: 'False', reason: 'WriteFailed', message: 'EIO' },
          }),
        ],
        [
          120_000,
          statusOf({
            ...HEALTHY,
            ActuatorConfirmed: { status: 'False', reason: 'WriteFailed', message: 'EIO' },
          }),
        ],
      ],
      ['0 started unconfirmed', '120000 raised unconfirmed'],
    ],
    [
      'a window open for 30 min',
      [
        [0, statusOf({ ...HEALTHY, Interlocked: { status: 'True', reason: 'Tripped', message: 'window' } })],
        [
          1_800_000,
          statusOf({ ...HEALTHY, Interlocked: { status: 'True', reason: 'Tripped', message: 'window' } }),
        ],
        [
          1_900_000,
          statusOf({ ...HEALTHY, Interlocked: { status: 'False', reason: 'Clear', message: 'no' } }),
        ],
      ],
      ['0 started interlock', '1800000 raised interlock', '1900000 resolved interlock after 1900000'],
    ],
  ];
  for (const [name, steps, expected] of table) {
    test(name, () => assert.deepEqual(run(steps).seen, expected));
  }

  test('a rule set to false: the streak is tracked (faults are logged) but never raised', () => {
    const rules: LoopAlertRules = { ...RULES, delaysMs: { ...RULES.delaysMs, faulted: undefined } };
    const { seen } = run(
      [
        [0, statusOf(STALE)],
        [3_600_000, statusOf(STALE)],
        [3_700_000, statusOf(HEALTHY)],
      ],
      rules,
    );
    assert.deepEqual(seen, ['0 started faulted', '3700000 ended faulted']);
  });

  test('the database unusable, seen on two loops: one streak for the node, raised once', () => {
    const full: Shown = {
      ...HEALTHY,
      StorageHealthy: { status: 'False', reason: 'Full', message: 'disk full' },
    };
    const { seen } = run([
      [0, statusOf(full)],
      [1_000, statusOf(full, { loop: 'cellar' })],
      [60_000, statusOf(full)],
      [61_000, statusOf(full, { loop: 'cellar' })],
      [62_000, statusOf(HEALTHY, { loop: 'cellar' })],
    ]);
    assert.deepEqual(seen, [
      '0 started storage',
      '60000 raised storage',
      '62000 resolved storage after 62000',
    ]);
  });

  test('a status without StorageHealthy (not yet set) neither starts nor ends the database streak', () => {
    const full: Shown = {
      ...HEALTHY,
      StorageHealthy: { status: 'False', reason: 'Full', message: 'disk full' },
    };
    const { Faulted, ActuatorConfirmed } = HEALTHY;
    const { seen } = run([
      [0, statusOf(full)],
      [10_000, statusOf({ Faulted, ActuatorConfirmed }, { loop: 'cellar' })],
      [60_000, statusOf(full)],
    ]);
    assert.deepEqual(seen, ['0 started storage', '60000 raised storage']);
  });

  test('the alert band: above high for forMs raises, no reading keeps the streak, back inside resolves', () => {
    const rules: LoopAlertRules = { ...RULES, band: { high: 22, forMs: 600_000 } };
    const { seen } = run(
      [
        [0, statusOf(HEALTHY, { measured: 22.5 })],
        [300_000, statusOf(STALE, { measured: undefined })],
        [600_000, statusOf(HEALTHY, { measured: 23 })],
        [700_000, statusOf(HEALTHY, { measured: 21.9 })],
      ],
      rules,
    );
    assert.deepEqual(seen, [
      '0 started band',
      '300000 started faulted',
      '600000 ended faulted',
      '600000 raised band',
      '700000 resolved band after 700000',
    ]);
  });

  test('an autotune ending is one event; a loop first seen with a finished one tells nothing', () => {
    const autotuning = (status: Condition['status'], reason: string): Shown => ({
      ...HEALTHY,
      Autotuning: { status, reason, message: `autotune ${reason}` },
    });
    const first = run([
      [0, statusOf(autotuning('False', 'Done'))],
      [1_000, statusOf(autotuning('True', 'Relay'))],
      [2_000, statusOf(autotuning('True', 'Relay'))],
      [3_000, statusOf(autotuning('False', 'Done'))],
      [4_000, statusOf(autotuning('False', 'Done'))],
      [5_000, statusOf(autotuning('True', 'Noise'))],
      [6_000, statusOf(autotuning('False', 'Aborted'))],
    ]);
    assert.deepEqual(first.seen, ['3000 event autotune done', '6000 event autotune aborted']);
    const off = run(
      [
        [0, statusOf(autotuning('True', 'Relay'))],
        [1_000, statusOf(autotuning('False', 'Done'))],
      ],
      { ...RULES, autotune: false },
    );
    assert.deepEqual(off.seen, []);
  });

  test('a profile finishing is one event; one seen finished first, or stopped, tells nothing', () => {
    const profile = (name: string, state: 'running' | 'paused' | 'finished') =>
      profileStatus(name, state, { stepCount: 3, setpoint: 2 });
    const stopped = statusOf(HEALTHY);
    const { seen, transitions } = runWith([
      [0, profile('lager', 'finished')],
      [1_000, stopped],
      [2_000, profile('lager', 'running')],
      [3_000, profile('lager', 'paused')],
      [4_000, profile('lager', 'finished')],
      [5_000, profile('lager', 'finished')],
      [6_000, profile('ale', 'running')],
      [7_000, stopped],
      [8_000, profile('ale', 'finished')],
    ]);
    assert.deepEqual(seen, ['4000 event profile finished']);
    assert.deepEqual(transitions[0], {
      phase: 'event',
      kind: 'profile',
      loop: 'room',
      outcome: 'finished',
      name: 'lager',
      message: 'all 3 steps done; it holds its last setpoint, 2, until it is stopped',
    });
    const off = run(
      [
        [0, profile('lager', 'running')],
        [1_000, profile('lager', 'finished')],
      ],
      { ...RULES, profile: false },
    );
    assert.deepEqual(off.seen, []);
  });
});

describe('raiseDue and nextDueMs: a streak whose delay ends between statuses', () => {
  test('given a fault and no status after it, when its delay has passed, then raiseDue raises it once', () => {
    const { state } = run([[1_000, statusOf(STALE)]]);
    const rulesOf = () => RULES;
    assert.equal(nextDueMs(state, rulesOf), 61_000);
    assert.deepEqual(raiseDue(state, rulesOf, 60_999).transitions, []);
    const due = raiseDue(state, rulesOf, 61_000);
    assert.deepEqual(due.transitions.map(shown), ['raised faulted']);
    assert.deepEqual(raiseDue(due.state, rulesOf, 120_000).transitions, [], 'once');
    assert.equal(nextDueMs(due.state, rulesOf), undefined, 'nothing else is waiting');
  });
});

describe('forgetLoops', () => {
  test('a removed loop: its raised streak is resolved, its unraised one ended, the node keeps its own', () => {
    const full: Shown = {
      ...STALE,
      StorageHealthy: { status: 'False', reason: 'Full', message: 'disk full' },
    };
    const { state } = run([
      [0, statusOf(LATCHED)],
      [0, statusOf(full, { loop: 'cellar' })],
    ]);
    const forgotten = forgetLoops(state, (loop) => loop !== 'room' && loop !== 'cellar', 5_000);
    assert.deepEqual(forgotten.transitions.map(shown).sort(), [
      'ended faulted',
      'resolved latched after 5000',
    ]);
    assert.deepEqual([...forgotten.state.streaks.keys()], ['storage']);
  });
});

describe('trackPeer: a watched node', () => {
  test('not seen at the start, then online before its delay: never told; offline for its delay: raised, then resolved', () => {
    let state = EMPTY_ALERT_STATE;
    const seen: string[] = [];
    const step = (atMs: number, problem: string | undefined) => {
      const tracked = trackPeer(state, 'cellar', problem, 120_000, atMs);
      state = tracked.state;
      for (const t of tracked.transitions) seen.push(`${atMs} ${shown(t)}`);
    };
    step(0, 'not seen online since this node started');
    step(300, undefined);
    step(60_000, 'offline');
    step(100_000, 'offline');
    assert.deepEqual(raiseDue(state, () => RULES_WITH_PEERS, 179_999).transitions, []);
    const due = raiseDue(state, () => RULES_WITH_PEERS, 180_000);
    state = due.state;
    seen.push(...due.transitions.map((t) => `180000 ${shown(t)}`));
    step(200_000, undefined);
    assert.deepEqual(seen, [
      '0 started peer',
      '300 ended peer',
      '60000 started peer',
      '180000 raised peer',
      '200000 resolved peer after 140000',
    ]);
  });
});

const RULES_WITH_PEERS: LoopAlertRules = { delaysMs: { peer: 120_000 }, autotune: false, profile: false };
