/** Assertion and timing helpers repeated across test files. */
import assert from 'node:assert/strict';

/** Fails unless `actual` is within `tolerance` of `expected` (inclusive); `what` names the value. */
export function assertClose(actual: number, expected: number, tolerance: number, what = 'value'): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: expected ${expected} ± ${tolerance}, got ${actual}`,
  );
}

/** Lets every callback already queued run (promise jobs, then one macrotask turn). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** An Error carrying an errno `code`, as node:fs throws (`EACCES`, `EIO`…). */
export function errnoError(code: string, message = `${code}: from fs`): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
