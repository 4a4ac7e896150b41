/**
 * One LAN device of http-lan.fault.ts, run inside the test's network namespace
 * (`ip netns exec <ns> node lan-client.mjs '<job JSON>'`): it connects from its own address
 * (`job.from`) to the daemon (`job.host`:`job.port`). Plain JS so it starts in a blink. It
 * prints JSON lines: `{"event":"ready",…}` once its attack is in place, `{"event":"done",…}`
 * with its figures at the end; "stop" on stdin ends a job that runs until told.
 *
 * Jobs: `hold` (keep-alive connections and slow-body POSTs, reopened as the server closes
 * them), `requests` (one request after another, each on a fresh connection: the owner),
 * `streams` (event streams held open), `flood` (many requests, a few at a time, kept alive).
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const job = JSON.parse(process.argv[2] ?? '{}');
const say = (event, figures = {}) => process.stdout.write(`${JSON.stringify({ event, ...figures })}\n`);
let stopped = false;
const stopSignal = new Promise((resolve) => {
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'stop') {
      stopped = true;
      resolve();
    }
  });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const hostHeader = `${job.host}:${job.port}`;

/** A raw connection from our address; `onOpen` writes, `onClose` is told. */
function rawConnection(onOpen, onClose) {
  const socket = connect({ host: job.host, port: job.port, localAddress: job.from });
  socket.on('connect', () => onOpen(socket));
  socket.on('error', () => {});
  socket.on('data', () => {});
  socket.on('close', () => onClose(socket));
  return socket;
}

/**
 * `idle` keep-alive connections (an unauthenticated GET answered 401, again every 2 s, under
 * the server's 5 s keep-alive timeout) and `slowBody` POSTs whose body comes a byte a second;
 * every one the server closes is reopened after `reopenMs`. Counts what the server closed.
 */
async function hold() {
  const counts = { opened: 0, closedByServer: 0, live: 0 };
  const open = (kind) => {
    let timer;
    let connected = false;
    rawConnection(
      (socket) => {
        connected = true;
        counts.opened++;
        counts.live++;
        if (kind === 'idle') {
          const get = () =>
            socket.write(`GET /api/loops HTTP/1.1\r\nHost: ${hostHeader}\r\nConnection: keep-alive\r\n\r\n`);
          get();
          timer = setInterval(get, 2_000);
        } else {
          socket.write(
            `POST /api/session HTTP/1.1\r\nHost: ${hostHeader}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{`,
          );
          timer = setInterval(() => socket.write(' '), 1_000);
        }
      },
      () => {
        clearInterval(timer);
        if (connected) counts.live--;
        if (stopped) return;
        counts.closedByServer++;
        setTimeout(() => !stopped && open(kind), job.reopenMs ?? 500);
      },
    );
  };
  for (let i = 0; i < (job.idle ?? 0); i++) open('idle');
  for (let i = 0; i < (job.slowBody ?? 0); i++) open('slow');
  await sleep(job.settleMs ?? 2_000);
  say('ready', counts);
  await stopSignal;
  say('done', counts);
  process.exit(0);
}

/** One request; resolves with its status (or error code), time, headers and body. */
function one(path, { agent = false, headers = {}, timeoutMs = 5_000, method = 'GET', body } = {}) {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const done = (status, extra = {}) =>
      resolve({ status, ms: Math.round(performance.now() - startedAt), ...extra });
    const req = request(
      {
        host: job.host,
        port: job.port,
        localAddress: job.from,
        path,
        method,
        agent,
        headers,
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (text.length < 200_000) text += chunk;
        });
        res.on('end', () => done(res.statusCode, { headers: res.headers, body: text }));
        res.on('error', () => done('aborted'));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error) => done(error.code ?? error.message));
    req.end(body);
  });
}

/** `count` requests to `path`, one after another `everyMs` apart, each on a fresh connection. */
async function requests() {
  const results = [];
  for (let i = 0; i < (job.count ?? 1); i++) {
    const startedAt = performance.now();
    const r = await one(job.path ?? '/api/loops', { headers: job.headers ?? {} });
    results.push(job.keepBody ? r : { status: r.status, ms: r.ms, retryAfter: r.headers?.['retry-after'] });
    if (job.untilStatus !== undefined && r.status === job.untilStatus) break;
    await sleep(Math.max(0, (job.everyMs ?? 0) - (performance.now() - startedAt)));
  }
  say('done', { results });
  process.exit(0);
}

/** `count` event streams held open (status of each); `login`: first get a session cookie. */
async function streams() {
  const headers = { Accept: 'text/event-stream', ...(job.headers ?? {}) };
  if (job.login) {
    const r = await one('/api/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: job.login }),
    });
    headers.Cookie = String(r.headers?.['set-cookie']?.[0] ?? '').split(';')[0];
  }
  const statuses = await Promise.all(
    Array.from(
      { length: job.count ?? 1 },
      () =>
        new Promise((resolve) => {
          const req = request(
            {
              host: job.host,
              port: job.port,
              localAddress: job.from,
              path: '/api/stream',
              agent: false,
              headers,
            },
            (res) => {
              resolve(res.statusCode);
              if (res.statusCode !== 200) res.resume();
              else res.once('data', () => {}); // read the snapshot, then hold it open
            },
          );
          req.setTimeout(5_000, () => resolve('timeout'));
          req.on('error', (error) => resolve(error.code ?? error.message));
          req.end();
        }),
    ),
  );
  say('ready', { statuses });
  if (job.hold) await stopSignal;
  say('done', { statuses });
  process.exit(0);
}

/** `count` requests with a wrong token each, `concurrency` at a time on kept-alive connections, at most `ratePerS`. */
async function flood() {
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency ?? 8 });
  const byStatus = {};
  const retryAfters = new Set();
  let missingRetryAfter = 0;
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency ?? 8 }, async () => {
      while (next < job.count) {
        const i = next++;
        // Paced to `ratePerS` overall (the rate of the measured attack), when given.
        if (job.ratePerS)
          await sleep(Math.max(0, (i * 1000) / job.ratePerS - (performance.now() - startedAt)));
        const r = await one(job.path ?? '/api/loops', {
          agent,
          headers: { Authorization: `Bearer wrong-token-${i}-${'x'.repeat(20)}` },
        });
        byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
        if (r.headers?.['retry-after']) retryAfters.add(r.headers['retry-after']);
        else if (r.status === 429) missingRetryAfter++;
      }
    }),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  agent.destroy();
  say('done', { byStatus, seconds, retryAfters: [...retryAfters], missingRetryAfter });
  process.exit(0);
}

const jobs = { hold, requests, streams, flood };
await jobs[job.kind]();
