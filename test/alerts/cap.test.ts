/** The hourly cap per channel: a flapping sensor cannot flood a phone, and nothing is hidden. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HourlyCap } from '../../src/alerts/cap.js';
import type { AlertNotice } from '../../src/alerts/notice.js';

const HOUR_MS = 3_600_000;

function notice(n: number, phase: AlertNotice['phase']): AlertNotice {
  return {
    id: `n/room/faulted/${n}/${phase}`,
    streakId: `n/room/faulted/${n}`,
    node: 'n',
    loop: 'room',
    kind: 'faulted',
    phase,
    severity: phase === 'raised' ? 'critical' : 'info',
    title: 'Room: sensor fault',
    message: 'stale',
    atMs: n,
  };
}

test('given a cap of 3, when 5 streaks are raised within the hour, then 3 are told and the 4th and 5th held back', () => {
  const cap = new HourlyCap(3);
  const told = [1, 2, 3, 4, 5].map((n) => cap.admit('phone', notice(n, 'raised'), n * 60_000));
  assert.deepEqual(
    told.map((t) => t !== undefined),
    [true, true, true, false, false],
  );
  assert.equal(cap.heldBack('phone'), 2);
  assert.ok(cap.admit('other', notice(6, 'raised'), 6 * 60_000), 'each channel has its own cap');
});

test('a resolution is never counted; one of a held-back alert is dropped, one of a told alert passes', () => {
  const cap = new HourlyCap(1);
  assert.ok(cap.admit('phone', notice(1, 'raised'), 0));
  assert.equal(cap.admit('phone', notice(2, 'raised'), 1_000), undefined, 'held back');
  assert.equal(cap.admit('phone', notice(2, 'resolved'), 2_000), undefined, 'its resolution too');
  assert.ok(cap.admit('phone', notice(1, 'resolved'), 3_000), 'the told one is resolved, over the cap');
});

test('after the hour, the next alert is told with the count held back since the last one', () => {
  const cap = new HourlyCap(2);
  cap.admit('phone', notice(1, 'raised'), 0);
  cap.admit('phone', notice(2, 'raised'), 10_000);
  for (let n = 3; n <= 9; n++) cap.admit('phone', notice(n, 'raised'), n * 10_000);
  assert.equal(cap.admit('phone', notice(10, 'raised'), HOUR_MS - 1), undefined, 'still within the hour');
  const next = cap.admit('phone', notice(11, 'raised'), HOUR_MS);
  assert.equal(next?.suppressed, 8);
  assert.equal(cap.heldBack('phone'), 0);
  const after = cap.admit('phone', notice(12, 'raised'), HOUR_MS + 10_000);
  assert.equal(after?.suppressed, undefined, 'the count is told once');
});
