/**
 * The one-line status (`homeostat status`, the journal) of a loop with several sensors: the set's
 * summary after the flags; a sensor dropped or back is worth a new line, its distance moving is not.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus, SensorSetStatus } from '../../src/core/status.js';
import { formatStatusLine, statusLineChange, writtenStatusLine } from '../../src/status-line.js';

const T0 = Date.UTC(2026, 10, 30, 12);

function status(sensors?: SensorSetStatus): LoopStatus {
  return {
    loop: 'greenhouse',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 18,
    measured: 17.5,
    measuredAtMs: T0,
    output: 1,
    action: 'heating',
    generation: 1,
    observedGeneration: 1,
    actuators: {},
    conditions: [],
    updatedAtMs: T0,
    ...(sensors ? { sensors } : {}),
  };
}

const outlier = (distance: number): SensorSetStatus => ({
  combine: 'median',
  used: ['probe-1', 'probe-3'],
  dropped: [{ sensor: 'probe-2', reason: 'Outlier', message: '…', distance }],
  summary: `median of 3 (dropped probe-2: ${distance} °C from the others)`,
});

const allUsed: SensorSetStatus = {
  combine: 'median',
  used: ['probe-1', 'probe-2', 'probe-3'],
  dropped: [],
  summary: 'median of 3',
};

describe('status line: several sensors', () => {
  test('shows the summary after the flags', () => {
    assert.equal(
      formatStatusLine(status(outlier(4.8)), '°C'),
      'greenhouse  17.50 °C → 18 °C  heat  output 100 %  heating  [ok]  sensors: median of 3 (dropped probe-2: 4.8 °C from the others)',
    );
  });

  test('a loop with one sensor shows no sensors note', () => {
    assert.doesNotMatch(formatStatusLine(status(), '°C'), /sensors/);
  });

  test('a sensor dropped is a change worth a line; the same sensor dropped farther is not', () => {
    const written = writtenStatusLine(status(allUsed), T0);
    assert.equal(statusLineChange(written, status(outlier(4.8)), T0 + 1_000), 'sensors');
    const withOutlier = writtenStatusLine(status(outlier(4.8)), T0);
    assert.equal(statusLineChange(withOutlier, status(outlier(6.1)), T0 + 1_000), undefined);
    assert.equal(statusLineChange(withOutlier, status(allUsed), T0 + 1_000), 'sensors');
  });
});
