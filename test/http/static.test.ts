import assert from 'node:assert/strict';
import { readFileSync, symlinkSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { DashboardAssets } from '../../src/http/static.js';
import { tempDir, writeTree } from '../support/tmp.js';

const PAGE = '<!doctype html><title>homeostat</title><script src="/assets/app.js"></script>';
const APP = `console.log(${JSON.stringify('x'.repeat(2_000))});\n`;

/** A dashboard folder with the files a release has, plus ones that must never be served. */
const outside = writeTree(tempDir({ after }), { 'secret.js': 'the secret' });
const dir = writeTree(tempDir({ after }), {
  'index.html': PAGE,
  'app.js': APP,
  'style.css': 'body { margin: 0 }',
  '.env.js': 'hidden',
  'notes.txt': 'no type for .txt',
  'sub/inner.js': 'in a subfolder',
});
symlinkSync(join(outside, 'secret.js'), join(dir, 'link.js'));
const assets = new DashboardAssets(dir);

interface Served {
  served: boolean;
  status?: number;
  headers: Record<string, string>;
  body?: Buffer;
}

function get(name: string, headers: IncomingHttpHeaders = {}, method = 'GET'): Served {
  const out: Served = { served: false, headers: {} };
  const req = { method, headers } as IncomingMessage;
  const res = {
    writeHead(status: number, head: Record<string, string>) {
      out.status = status;
      out.headers = head;
    },
    end(body?: Buffer) {
      out.body = body;
    },
  } as unknown as ServerResponse;
  out.served = assets.serve(req, res, name);
  return out;
}

describe('DashboardAssets', () => {
  test('given index.html, then 200 with its bytes, HTML type, an ETag, no-cache, and the page policy', () => {
    const page = get('index.html');
    assert.equal(page.served, true);
    assert.equal(page.status, 200);
    assert.equal(page.body?.toString(), PAGE);
    assert.equal(page.headers['Content-Type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['Content-Length'], String(Buffer.byteLength(PAGE)));
    assert.match(page.headers.ETag ?? '', /^"[\w-]{22}"$/);
    assert.equal(page.headers['Cache-Control'], 'no-cache');
    assert.equal(page.headers['X-Content-Type-Options'], 'nosniff');
    assert.match(page.headers['Content-Security-Policy'] ?? '', /frame-ancestors 'none'/);
    assert.match(page.headers['Content-Security-Policy'] ?? '', /script-src 'self'/);
  });

  const types: Array<[string, string]> = [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['style.css', 'text/css; charset=utf-8'],
  ];
  for (const [name, type] of types) {
    test(`given ${name}, then served as ${type} without a page policy`, () => {
      const served = get(name);
      assert.equal(served.status, 200);
      assert.equal(served.headers['Content-Type'], type);
      assert.equal(served.headers['Content-Security-Policy'], undefined);
    });
  }

  test('given the same file twice, then the same ETag; given another file, then another ETag', () => {
    assert.equal(get('app.js').headers.ETag, get('app.js').headers.ETag);
    assert.notEqual(get('app.js').headers.ETag, get('style.css').headers.ETag);
  });

  test('given If-None-Match with the current ETag, then 304 with no body', () => {
    const { ETag } = get('app.js').headers;
    const again = get('app.js', { 'if-none-match': ETag });
    assert.equal(again.status, 304);
    assert.equal(again.body, undefined);
    assert.equal(again.headers.ETag, ETag);
  });

  test('given If-None-Match with an old ETag, then 200 with the file', () => {
    const again = get('app.js', { 'if-none-match': '"old"' });
    assert.equal(again.status, 200);
    assert.equal(again.body?.toString(), APP);
  });

  test('given Accept-Encoding gzip, then the gzipped bytes, smaller, that unzip to the file', () => {
    const zipped = get('app.js', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.headers['Content-Encoding'], 'gzip');
    assert.equal(zipped.headers.Vary, 'Accept-Encoding');
    assert.ok(zipped.body && zipped.body.byteLength < Buffer.byteLength(APP));
    assert.equal(zipped.headers['Content-Length'], String(zipped.body.byteLength));
    assert.equal(gunzipSync(zipped.body).toString(), APP);
  });

  test('given no Accept-Encoding, then plain bytes', () => {
    const plain = get('app.js');
    assert.equal(plain.headers['Content-Encoding'], undefined);
    assert.equal(plain.body?.toString(), APP);
  });

  test('given HEAD, then the headers with no body', () => {
    const head = get('app.js', {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['Content-Length'], String(Buffer.byteLength(APP)));
    assert.equal(head.body, undefined);
  });

  const refused = [
    'nope.js',
    '.env.js',
    'notes.txt',
    'sub/inner.js',
    'inner.js',
    '../secret.js',
    `../${dir.split('/').pop()}/app.js`,
    'link.js',
    '',
  ];
  for (const name of refused) {
    test(`given ${JSON.stringify(name)}, then not served (false, nothing written)`, () => {
      const answer = get(name);
      assert.equal(answer.served, false);
      assert.equal(answer.status, undefined);
    });
  }

  const uplot = dirname(createRequire(import.meta.url).resolve('uplot'));
  const bundled: Array<[string, string]> = [
    ['uPlot.iife.min.js', 'text/javascript; charset=utf-8'],
    ['uPlot.min.css', 'text/css; charset=utf-8'],
  ];
  for (const [name, type] of bundled) {
    test(`given ${name}, then uPlot's own file from node_modules, served offline`, () => {
      const served = get(name);
      assert.equal(served.status, 200);
      assert.equal(served.headers['Content-Type'], type);
      assert.deepEqual(served.body, readFileSync(join(uplot, name)));
    });
  }

  test('weight: the plain and gzipped bytes of every served file', () => {
    const { plainBytes, gzippedBytes } = assets.weight();
    const expected = [PAGE, APP, 'body { margin: 0 }'].reduce(
      (sum, text) => sum + Buffer.byteLength(text),
      0,
    );
    const uplotBytes = bundled.reduce((sum, [name]) => sum + readFileSync(join(uplot, name)).byteLength, 0);
    assert.equal(plainBytes, expected + uplotBytes);
    assert.ok(gzippedBytes > 0 && gzippedBytes < plainBytes);
  });

  test('given Accept-Encoding "gzip;q=0" (gzip refused), then plain bytes', {}, () => {
    const answer = get('app.js', { 'accept-encoding': 'gzip;q=0, identity' });
    assert.equal(answer.headers['Content-Encoding'], undefined);
  });
});
