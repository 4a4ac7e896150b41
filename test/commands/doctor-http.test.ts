import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkHttp } from '../../src/commands/doctor.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';

/** doctor's HTTP API check: will the daemon be able to serve the dashboard? */

const configWith = (http: string) => validConfig(minimalSimConfigText({ extra: `http: ${http}` }));

function listening(server: Server | ReturnType<typeof createHttpServer>, port: number): Promise<void> {
  return new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
}

describe('checkHttp', () => {
  test('given http.enabled false, then skipped, saying it is off', async () => {
    const result = await checkHttp(configWith('{ enabled: false }'));
    assert.deepEqual(result, { name: 'HTTP API', status: 'skip', detail: 'off (http.enabled: false)' });
  });

  test('given a free port, then ok with the dashboard address', async () => {
    const port = await freePort();
    const result = await checkHttp(configWith(`{ port: ${port} }`));
    assert.equal(result.status, 'ok');
    assert.match(result.detail, new RegExp(`dashboard will be at http://127\\.0\\.0\\.1:${port}`));
  });

  test('given the port taken by another program, then fail with the fix naming http.port', async (t) => {
    const port = await freePort();
    const other = createServer((socket) => socket.end());
    t.after(() => other.close());
    await listening(other, port);
    const result = await checkHttp(configWith(`{ port: ${port} }`));
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /in use by another program/);
    assert.match(result.fix ?? '', /http\.port/);
  });

  /** A homeostat's API on a free port, answering /api/node as node `id`. */
  async function homeostatServing(t: { after: (fn: () => void) => void }, id: string): Promise<number> {
    const port = await freePort();
    const daemon = createHttpServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ node: { id } }));
    });
    t.after(() => daemon.close());
    await listening(daemon, port);
    return port;
  }

  test('given the port served by this node (its daemon running), then ok naming it', async (t) => {
    const port = await homeostatServing(t, 'pi');
    const result = await checkHttp(configWith(`{ port: ${port} }`));
    assert.deepEqual(
      { status: result.status, detail: result.detail },
      { status: 'ok', detail: `homeostat (node pi) serves http://127.0.0.1:${port}` },
    );
  });

  test('given the port served by another node, then fail naming both, with the fix', async (t) => {
    const port = await homeostatServing(t, 'fermenter');
    const result = await checkHttp(configWith(`{ port: ${port} }`));
    assert.equal(result.status, 'fail');
    assert.equal(
      result.detail,
      `127.0.0.1:${port} is served by another homeostat (node fermenter), not this node (pi)`,
    );
    assert.match(result.fix ?? '', /set http\.port to a free port \(or stop node fermenter\)/);
  });

  test('given a token file that does not exist (off loopback), then fail saying the API stays off', async (t) => {
    const missing = path.join(tempDir(t), 'http-token');
    const result = await checkHttp(configWith(`{ host: 0.0.0.0, tokenFile: ${missing} }`));
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /cannot read http\.tokenFile .*ENOENT.*the API stays off/);
    assert.match(result.fix ?? '', /openssl rand -hex 24/);
  });

  test('given a readable token file and a free port on every address, then ok, other machines with the token', async (t) => {
    const tokenFile = path.join(tempDir(t), 'http-token');
    writeFileSync(tokenFile, 'a-long-enough-random-token\n');
    const port = await freePort();
    const result = await checkHttp(configWith(`{ host: 0.0.0.0, port: ${port}, tokenFile: ${tokenFile} }`));
    assert.equal(result.status, 'ok');
    assert.match(result.detail, /other machines too, with the token/);
  });
});
