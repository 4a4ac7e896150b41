/**
 * The daemon regulates whatever happens to its HTTP port: a port another program holds is
 * logged once, shown on every loop (ApiServing False, PortInUse) and retried until it is free;
 * the node starts and stops as without the API.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpServer, ServingState } from '../../src/http/server.js';
import type { Node } from '../../src/node.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { buildTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { serving, until } from './support.js';

const RETRY_EVERY_MS = 50;

/** A server holding a port of 127.0.0.1, as another program would. */
async function occupyPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object', 'listening');
  return { server, port: address.port };
}

const release = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** The node with its API on `port`, retrying every RETRY_EVERY_MS, counting its listen attempts. */
function nodeOnPort(t: TestContext, port: number) {
  const log = recordingLogger();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const node = buildTestNode(demoConfigText(), path.join(tempDir(t), 'state.db'), {
    clock,
    logger: log.logger,
    http: { port, retryEveryMs: RETRY_EVERY_MS },
  });
  t.after(() => node.stop('test'));
  const http = node.http as unknown as { listen(): Promise<ServingState> };
  assert.ok(http, 'the node has an HTTP server');
  const attempts = { count: 0 };
  const listen = http.listen.bind(http);
  http.listen = () => {
    attempts.count++;
    return listen();
  };
  return { node, clock, log, attempts };
}

/** Every loop's ApiServing condition as `[status, reason]` (undefined for a loop without one). */
function apiServing(node: Node): Array<[string, string] | undefined> {
  return node.daemon.statuses().map((status) => {
    const condition = status.conditions.find((c) => c.type === 'ApiServing');
    return condition && [condition.status, condition.reason];
  });
}

const everyLoop = (node: Node, status: string, reason: string) =>
  apiServing(node).length === 3 && apiServing(node).every((c) => c?.[0] === status && c[1] === reason);

describe('given the HTTP port is held by another program', () => {
  test('then the node starts and regulates; every loop shows ApiServing False PortInUse; one error line names the address and http.port; once the port is free the API serves and ApiServing turns True', async (t) => {
    const taken = await occupyPort();
    t.after(() => release(taken.server));
    const { node, clock, log, attempts } = nodeOnPort(t, taken.port);
    await node.start();
    await until(() => attempts.count >= 1 && log.messages(LogLevel.error).length > 0, 'the failed listen');
    await clock.advance(60_000);
    assert.ok(everyLoop(node, 'False', 'PortInUse'), JSON.stringify(apiServing(node)));
    for (const status of node.daemon.statuses()) {
      assert.equal(status.updatedAtMs, clock.nowMs(), `${status.loop} cycles`);
    }
    assert.deepEqual(node.gate.silentLoops(), []);
    await until(() => attempts.count >= 3, 'three listen attempts');

    const errors = log.messages(LogLevel.error).filter((m) => m.includes('HTTP API not started'));
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.equal(
      errors[0],
      `HTTP API not started: 127.0.0.1:${taken.port} is already in use (EADDRINUSE): another program (or homeostat) listens there; set http.port to a free port; regulation goes on; retrying every ${RETRY_EVERY_MS / 1000} s`,
    );
    assert.equal(node.http?.url, undefined);

    await release(taken.server);
    const url = await serving(node);
    assert.equal(url, `http://127.0.0.1:${taken.port}`);
    await until(() => everyLoop(node, 'True', 'Listening'), 'ApiServing True on every loop');
    const health = await fetch(`${url}/api/health`);
    assert.equal(health.status, 200);
    assert.ok(
      log.messages(LogLevel.info).includes(`dashboard and API at ${url}`),
      'the address is logged once it serves',
    );

    await node.stop('test');
    await assert.rejects(fetch(`${url}/api/health`), 'nothing listens after the stop');
  });

  test('when the node stops while the port is still held: the stop resolves and the retries end', async (t) => {
    const taken = await occupyPort();
    t.after(() => release(taken.server));
    const { node, clock, log, attempts } = nodeOnPort(t, taken.port);
    await node.start();
    await until(() => log.messages(LogLevel.error).length > 0, 'the failed listen');
    await clock.advance(1_000);
    assert.ok(everyLoop(node, 'False', 'PortInUse'), JSON.stringify(apiServing(node)));
    await node.stop('test');
    await release(taken.server);
    const before = attempts.count;
    // An absence shows only over time: four retry periods without an attempt or a listen.
    await sleep(4 * RETRY_EVERY_MS);
    assert.equal(attempts.count, before);
    assert.equal((node.http as HttpServer).url, undefined);
  });

  test('given host localhost (a name: its listen waits for a lookup), when the node stops right after its start, then nothing listens afterwards', async (t) => {
    const dir = tempDir(t);
    const node = buildTestNode(demoConfigText(), path.join(dir, 'state.db'), {
      http: { host: 'localhost', port: 0 },
    });
    // Were the server leaked (listening after the stop), it is closed here, or this file would never end.
    t.after(() => node.http?.stop());
    await node.start();
    await node.stop('test');
    // An absence shows only over time: far longer than a lookup of localhost takes.
    await sleep(200);
    assert.equal(node.http?.url, undefined, `still listening at ${node.http?.url} after the stop`);
  });
});
