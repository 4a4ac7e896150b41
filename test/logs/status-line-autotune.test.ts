/**
 * The one-line status (`homeostat status`, the journal) during and after an autotune: a run in
 * progress shows its phase and cycles; a finished run is no trouble; an aborted one is flagged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AutotuneStatus, LoopStatus } from '../../src/core/status.js';
import type { Condition } from '../../src/core/types.js';
import { formatStatusLine } from '../../src/status-line.js';

const T0 = Date.UTC(2026, 10, 30, 12);

function autotuning(status: Condition['status'], reason: string): Condition {
  return { type: 'Autotuning', status, reason, message: '', lastTransitionMs: T0, observedGeneration: 1 };
}

function line(phase: AutotuneStatus['phase'], condition: Condition): string {
  const status: LoopStatus = {
    loop: 'room',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 19.75,
    measuredAtMs: T0,
    output: 1,
    action: 'heating',
    generation: 2,
    observedGeneration: 2,
    actuators: {},
    conditions: [condition],
    updatedAtMs: T0,
    autotune: {
      phase,
      side: 'raise',
      cycles: 1,
      cyclesNeeded: 3,
      elapsedMs: 600_000,
      remainingMs: 3_600_000,
      remainingIsLimit: false,
    } as AutotuneStatus,
  };
  return formatStatusLine(status, '°C');
}

describe('status line: autotune', () => {
  const cases: { name: string; phase: AutotuneStatus['phase']; condition: Condition; want: RegExp }[] = [
    {
      name: 'measuring the noise',
      phase: 'noise',
      condition: autotuning('True', 'Noise'),
      want: /heating {2}autotune noise {2}\[ok\]$/,
    },
    {
      name: 'relay cycles',
      phase: 'relay',
      condition: autotuning('True', 'Relay'),
      want: /heating {2}autotune relay 1\/3 {2}\[ok\]$/,
    },
    {
      name: 'done: no trouble, no note',
      phase: 'done',
      condition: autotuning('False', 'Done'),
      want: /heating {2}\[ok\]$/,
    },
    {
      name: 'aborted: flagged',
      phase: 'aborted',
      condition: autotuning('False', 'Aborted'),
      want: /heating {2}\[Autotuning=False\(Aborted\)\]$/,
    },
  ];
  for (const { name, phase, condition, want } of cases) {
    test(name, () => assert.match(line(phase, condition), want));
  }
});
