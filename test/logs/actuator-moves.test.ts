/** How loud each actuator move is: the journal keeps news, not regulation's every step. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandReason } from '../../src/core/command.js';
import { moveLogLevel } from '../../src/runtime/loop-reconciler-act.js';

describe('actuator moves: log level by kind and reason', () => {
  const table: Array<[kind: 'relay' | 'continuous', reason: CommandReason, level: string]> = [
    ['continuous', 'regulate', 'debug'], // a fogger at every reading
    ['relay', 'regulate', 'info'], // the heater came on
    ['relay', 'safe-state', 'info'],
    ['continuous', 'safe-state', 'info'],
    ['relay', 'keep-alive', 'debug'],
    ['continuous', 'keep-alive', 'debug'],
    ['relay', 'drift', 'warn'], // switched by hand
    ['continuous', 'retry', 'warn'], // not confirmed
  ];
  for (const [kind, reason, level] of table) {
    test(`given a ${kind} actuator moved for ${reason}, then ${level}`, () => {
      assert.equal(moveLogLevel(kind, reason), level);
    });
  }
});
