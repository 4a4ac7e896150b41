import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  clamp,
  clampFraction,
  FULL_OUTPUT,
  formatPercent,
  isOn,
  roundHundredths,
} from '../../src/core/numbers.js';
import {
  atMostNow,
  FUTURE_STAMP_TOLERANCE_MS,
  formatDuration,
  isAheadOfNow,
  msToS,
  stampedInFuture,
  wholeSeconds,
} from '../../src/core/time.js';
import { at, min, s } from './fixtures.js';

describe('the clock-went-back rule (time.ts)', () => {
  test('a remembered time ahead of now counts as now; one before now is kept', () => {
    assert.equal(isAheadOfNow(at(s(1)), at(0)), true);
    assert.equal(isAheadOfNow(at(0), at(0)), false);
    assert.equal(atMostNow(at(min(60)), at(0)), at(0));
    assert.equal(atMostNow(at(-s(5)), at(0)), at(-s(5)));
  });

  test('a reading may be stamped up to the tolerance ahead of now, not further', () => {
    assert.equal(stampedInFuture(at(FUTURE_STAMP_TOLERANCE_MS), at(0)), false);
    assert.equal(stampedInFuture(at(FUTURE_STAMP_TOLERANCE_MS + 1), at(0)), true);
    assert.equal(stampedInFuture(at(-min(10)), at(0)), false);
  });
});

describe('units and messages (time.ts, numbers.ts)', () => {
  test('durations: seconds, whole seconds, then minutes from two minutes on', () => {
    assert.equal(msToS(1_500), 1.5);
    assert.equal(wholeSeconds(1_500), 2);
    assert.equal(formatDuration(s(119)), '119 s');
    assert.equal(formatDuration(s(120)), '2 min');
    assert.equal(formatDuration(min(90)), '90 min');
  });

  test('clamps, rounding and percentages', () => {
    assert.equal(clamp(1.5, -1, 1), 1);
    assert.equal(clamp(-1.5, -1, 1), -1);
    assert.equal(clampFraction(-0.2), 0);
    assert.equal(roundHundredths(0.12345), 0.12);
    assert.equal(formatPercent(0.4567), '45.7 %');
    assert.equal(formatPercent(-1), '-100 %');
  });

  test('on means above 0; unknown is off; full output is 99 % or more', () => {
    assert.equal(isOn(0.001), true);
    assert.equal(isOn(0), false);
    assert.equal(isOn(undefined), false);
    assert.equal(FULL_OUTPUT, 0.99);
  });
});
