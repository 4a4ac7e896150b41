/**
 * `homeostat plan` names the gains a loop with stored tunings runs with (a tuning in force, a
 * proposal waiting), after the file's diff; loops that never had a tuning print nothing more.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { planCommand } from '../../src/commands/inspect.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { DEMO } from '../storage/support.js';
import { silentLogger } from '../support/logger.js';
import { databaseWithHistory } from '../support/node.js';
import { tempDir, tempTree } from '../support/tmp.js';

const dir = tempDir({ after }, 'homeostat-plan-tunings-');
const dbPath = path.join(dir, 'state.db');
const configPath = path.join(
  tempTree({ after }, { 'config.yaml': DEMO }, 'homeostat-plan-file-'),
  'config.yaml',
);

function plan(): { code: number; lines: string[] } {
  const lines: string[] = [];
  const code = planCommand({ configPath, dbPath }, (line) => lines.push(line));
  return { code, lines };
}

function withStore(change: (store: DesiredStore) => void): void {
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: Date.now });
  try {
    change(new DesiredStore(db, Date.now));
  } finally {
    closeStore(db);
  }
}

const gains = (kp: number) => ({ gains: { kp, tiS: 700, tdS: 0 } });

describe('homeostat plan: tunings', () => {
  before(async () => {
    await databaseWithHistory(DEMO, dbPath);
  });

  test('given no stored tuning, then only the diff is printed', () => {
    assert.deepEqual(plan(), { code: 0, lines: ['No changes.'] });
  });

  test('given a proposal, then the loop runs the file gains and the proposal is named', () => {
    withStore((store) => store.recordTuning('room', gains(0.9), { apply: false, source: 'autotune' }));
    assert.deepEqual(plan(), {
      code: 0,
      lines: [
        'No changes.',
        'tuning room: config (kp 0.75, tiS 960 s, tdS 40 s); version 1 proposed, not applied (homeostat tuning room latest)',
      ],
    });
  });

  test('given the proposal accepted, then the tuning in force is named instead of the file', () => {
    withStore((store) => store.applyTuning('room', 1, 'cli'));
    assert.deepEqual(plan().lines, [
      'No changes.',
      "tuning room: version 1 (kp 0.9, tiS 700 s, tdS 0 s), not the file's",
    ]);
  });
});
