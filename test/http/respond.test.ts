/** readBody (src/http/respond.ts) over a fake request stream: its answers for a body that ends, is too large, or never ends. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { HttpError, MAX_BODY_BYTES, readBody } from '../../src/http/respond.js';

class FakeRequest extends EventEmitter {
  complete = false;
  readonly headers: Record<string, string> = {};
  resume(): void {}
}

const asReq = (fake: FakeRequest) => fake as unknown as IncomingMessage;

describe('readBody', () => {
  test('given a body that ends, then its bytes', async () => {
    const req = new FakeRequest();
    const body = readBody(asReq(req));
    req.emit('data', Buffer.from('{"a":'));
    req.emit('data', Buffer.from('1}'));
    req.complete = true;
    req.emit('end');
    req.emit('close');
    assert.equal((await body).toString(), '{"a":1}');
  });

  test('given a body larger than the limit, then 413', async () => {
    const req = new FakeRequest();
    const body = readBody(asReq(req));
    req.emit('data', Buffer.alloc(MAX_BODY_BYTES + 1));
    await assert.rejects(body, (error) => error instanceof HttpError && error.status === 413);
  });

  for (const how of ['close', 'error'] as const) {
    test(`given a connection that goes (${how}) before the body ended (a client gone, or closed to make room), then an HttpError 400, not a handler failure`, async () => {
      const req = new FakeRequest();
      const body = readBody(asReq(req));
      req.emit('data', Buffer.from('{'));
      if (how === 'error') req.emit('error', Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      req.emit('close');
      await assert.rejects(body, (error) => error instanceof HttpError && error.status === 400);
    });
  }
});
