import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Random, seedFromString } from '../../../src/drivers/sim/random.js';

function take(n: number, draw: () => number): number[] {
  return Array.from({ length: n }, draw);
}

describe('Random', () => {
  test('given the same seed, next() yields the same sequence', () => {
    const a = new Random(42);
    const b = new Random(42);
    assert.deepEqual(
      take(100, () => a.next()),
      take(100, () => b.next()),
    );
  });

  test('given different seeds, the sequences differ', () => {
    const a = new Random(1);
    const b = new Random(2);
    assert.notDeepEqual(
      take(10, () => a.next()),
      take(10, () => b.next()),
    );
  });

  test('next() stays in [0, 1) and looks uniform (mean ≈ 0.5)', () => {
    const random = new Random(7);
    const values = take(20_000, () => random.next());
    assert.ok(values.every((v) => v >= 0 && v < 1));
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    assert.ok(Math.abs(mean - 0.5) < 0.01, `mean ${mean}`);
  });

  test('gaussian() is deterministic for a seed and has mean ≈ 0, std dev ≈ 1', () => {
    const a = new Random(99);
    const b = new Random(99);
    const values = take(20_001, () => a.gaussian());
    assert.deepEqual(
      values,
      take(20_001, () => b.gaussian()),
    );
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
    assert.ok(Math.abs(mean) < 0.03, `mean ${mean}`);
    assert.ok(Math.abs(Math.sqrt(variance) - 1) < 0.03, `std dev ${Math.sqrt(variance)}`);
    assert.ok(values.every(Number.isFinite));
  });

  test('seedFromString is stable and distinguishes ids', () => {
    assert.equal(seedFromString('t1'), seedFromString('t1'));
    assert.notEqual(seedFromString('t1'), seedFromString('t2'));
  });
});
