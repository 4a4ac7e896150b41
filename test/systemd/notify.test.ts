import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  createNotifier,
  type DatagramSocket,
  NotifyUnavailableError,
  notifySocketAddress,
  watchdogIntervalMs,
} from '../../src/systemd/notify.js';
import { tempDir } from '../support/tmp.js';

interface ReceivingSocket {
  bind(path: string): void;
  close(): void;
  on(event: 'message', listener: (buf: Buffer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
const unix = createRequire(import.meta.url)('unix-dgram') as {
  createSocket(type: 'unix_dgram'): ReceivingSocket & DatagramSocket;
};

const dir = tempDir({ after }, 'homeostat-notify-');
let sockets = 0;

/** A real unix datagram socket standing in for systemd's /run/systemd/notify. */
function fakeSystemd() {
  const path = join(dir, `notify-${++sockets}.sock`);
  const server = unix.createSocket('unix_dgram');
  const received: string[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  server.on('error', (error) => assert.fail(error));
  server.on('message', (buf) => {
    received.push(buf.toString('utf8'));
    for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
  });
  server.bind(path);
  /** Resolves once `count` datagrams have arrived (the test's timeout bounds the wait). */
  const receivedCount = (count: number) =>
    new Promise<string[]>((resolve) => {
      if (received.length >= count) resolve(received);
      else waiters.push({ count, resolve: () => resolve(received) });
    });
  return { path, received, receivedCount, close: () => server.close() };
}

/** A socket that records what would be sent; `failWith` makes every send report that error. */
function recordingSocket(failWith?: Error) {
  const sent: Array<{ path: string; message: string }> = [];
  let closed = 0;
  const socket: DatagramSocket = {
    send(buf, offset, length, path, callback) {
      sent.push({ path, message: buf.subarray(offset, offset + length).toString('utf8') });
      callback(failWith);
    },
    close: () => {
      closed++;
    },
    on: () => undefined,
  };
  return { socket, sent, closed: () => closed };
}

/** A notifier for `env` whose datagrams go to a recording socket (`opts`: more notifier options). */
function recordedNotifier(env: NodeJS.ProcessEnv, opts: { pid?: number } = {}) {
  const recording = recordingSocket();
  const notifier = createNotifier(env, { socketFactory: () => recording.socket, ...opts });
  return { recording, notifier };
}

describe('createNotifier with a real notify socket', () => {
  test('given NOTIFY_SOCKET, then READY, WATCHDOG, STATUS and STOPPING arrive as sd_notify datagrams', {
    timeout: 5_000,
  }, async () => {
    const systemd = fakeSystemd();
    const notifier = createNotifier({ NOTIFY_SOCKET: systemd.path });
    assert.equal(notifier.enabled, true);
    notifier.ready();
    notifier.watchdog();
    notifier.status('3 loops:\nroom 20.1/20 °C heating');
    notifier.stopping();
    notifier.close();
    const received = await systemd.receivedCount(5);
    systemd.close();
    assert.deepEqual(received, [
      'STATUS=starting',
      'READY=1',
      'WATCHDOG=1',
      'STATUS=3 loops: room 20.1/20 °C heating',
      'STOPPING=1',
    ]);
  });

  test('given a closed notifier, then nothing more is sent', { timeout: 5_000 }, async () => {
    const systemd = fakeSystemd();
    const notifier = createNotifier({ NOTIFY_SOCKET: systemd.path });
    notifier.close();
    notifier.close();
    notifier.ready();
    // A marker from another sender: datagrams queue in order, so READY would arrive before it.
    const marker = createNotifier({ NOTIFY_SOCKET: systemd.path });
    marker.status('marker');
    marker.close();
    const received = await systemd.receivedCount(3);
    systemd.close();
    assert.deepEqual(received, ['STATUS=starting', 'STATUS=starting', 'STATUS=marker']);
  });
});

describe('watchdogIntervalMs: half of WATCHDOG_USEC, only for this process', () => {
  const pid = 4242;
  const cases: Array<[string, Record<string, string>, number | undefined]> = [
    ['no watchdog', {}, undefined],
    ['empty WATCHDOG_USEC', { WATCHDOG_USEC: '' }, undefined],
    ['WatchdogSec=60', { WATCHDOG_USEC: '60000000' }, 30_000],
    ['WatchdogSec=60 for this pid', { WATCHDOG_USEC: '60000000', WATCHDOG_PID: '4242' }, 30_000],
    ['a watchdog meant for another process', { WATCHDOG_USEC: '60000000', WATCHDOG_PID: '1' }, undefined],
    ['WatchdogSec=3s', { WATCHDOG_USEC: '3000000' }, 1_500],
    ['below a millisecond is still pinged every ms', { WATCHDOG_USEC: '1000' }, 1],
  ];
  for (const [name, env, expected] of cases) {
    test(`${name} → ${expected}`, () => assert.equal(watchdogIntervalMs(env, pid), expected));
  }
  const malformed: Array<[string, Record<string, string>, RegExp]> = [
    ['zero', { WATCHDOG_USEC: '0' }, /WATCHDOG_USEC/],
    ['negative', { WATCHDOG_USEC: '-5' }, /WATCHDOG_USEC/],
    ['fractional', { WATCHDOG_USEC: '1.5' }, /WATCHDOG_USEC/],
    ['text', { WATCHDOG_USEC: '60s' }, /WATCHDOG_USEC/],
    ['bad pid', { WATCHDOG_USEC: '60000000', WATCHDOG_PID: 'me' }, /WATCHDOG_PID/],
  ];
  for (const [name, env, message] of malformed) {
    test(`${name} → throws`, () => assert.throws(() => watchdogIntervalMs(env, pid), message));
  }
});

describe('notifySocketAddress', () => {
  test('an absolute path is used as is', () =>
    assert.equal(notifySocketAddress('/run/systemd/notify'), '/run/systemd/notify'));
  test('@name is the abstract socket \\0name', () =>
    assert.equal(notifySocketAddress('@/org/freedesktop/notify'), '\0/org/freedesktop/notify'));
  for (const bad of ['run/systemd/notify', '@', 'vsock:2:1234']) {
    test(`'${bad}' is rejected`, () => assert.throws(() => notifySocketAddress(bad), /NOTIFY_SOCKET/));
  }
});

describe('createNotifier without a usable socket', () => {
  test('given no NOTIFY_SOCKET, then a disabled notifier that opens no socket', () => {
    let opened = 0;
    const notifier = createNotifier(
      {},
      {
        socketFactory: () => {
          opened++;
          return recordingSocket().socket;
        },
      },
    );
    notifier.ready();
    notifier.watchdog();
    notifier.close();
    assert.equal(notifier.enabled, false);
    assert.equal(notifier.problem, undefined);
    assert.equal(opened, 0);
  });

  const missing = () => join(dir, 'no-such.sock');
  const failures: Array<[string, () => Record<string, string>, (() => DatagramSocket) | undefined, RegExp]> =
    [
      ['the socket does not exist', () => ({ NOTIFY_SOCKET: missing() }), undefined, /ENOENT/],
      [
        'the addon cannot be loaded',
        () => ({ NOTIFY_SOCKET: '/run/systemd/notify' }),
        () => {
          throw new Error('Could not locate the bindings file');
        },
        /Could not locate the bindings file/,
      ],
      ['the socket is abstract', () => ({ NOTIFY_SOCKET: '@notify' }), undefined, /abstract-namespace/],
      ['NOTIFY_SOCKET is relative', () => ({ NOTIFY_SOCKET: 'notify.sock' }), undefined, /absolute path/],
    ];
  for (const [why, env, socketFactory, reason] of failures) {
    test(`given WATCHDOG_USEC, when ${why}, then it throws so the caller exits at once`, () => {
      const opts = socketFactory ? { socketFactory } : {};
      assert.throws(
        () => createNotifier({ ...env(), WATCHDOG_USEC: '60000000' }, opts),
        (error: unknown) => {
          assert.ok(error instanceof NotifyUnavailableError);
          assert.match(error.message, /^systemd expects watchdog pings \(WATCHDOG_USEC=60000000\)/);
          assert.match(error.message, /cannot be used: /);
          assert.match(error.message, reason);
          return true;
        },
      );
    });
    test(`given no watchdog, when ${why}, then a disabled notifier says why`, () => {
      const notifier = createNotifier(env(), socketFactory ? { socketFactory } : {});
      assert.equal(notifier.enabled, false);
      assert.match(notifier.problem ?? '', reason);
    });
  }

  test('given a watchdog meant for another process, when the socket is missing, then no throw', () => {
    const notifier = createNotifier({
      NOTIFY_SOCKET: missing(),
      WATCHDOG_USEC: '60000000',
      WATCHDOG_PID: '1',
    });
    assert.equal(notifier.enabled, false);
    assert.equal(notifier.watchdogIntervalMs, undefined);
  });
});

describe('createNotifier with an injected socket', () => {
  test('an abstract socket is addressed with a leading NUL', () => {
    const { recording, notifier } = recordedNotifier({ NOTIFY_SOCKET: '@homeostat' });
    notifier.ready();
    assert.deepEqual(
      recording.sent.map((s) => s.path),
      ['\0homeostat', '\0homeostat'],
    );
  });

  test('the watchdog interval is exposed for the gate', () => {
    const { notifier } = recordedNotifier(
      { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '60000000' },
      { pid: 7 },
    );
    assert.equal(notifier.watchdogIntervalMs, 30_000);
  });

  test('a send that fails after start-up is reported, not thrown', () => {
    const failing = new Error('send -111');
    let failNow = false;
    const sent: string[] = [];
    const socket: DatagramSocket = {
      send: (buf, _offset, _length, _path, callback) => {
        sent.push(buf.toString());
        callback(failNow ? Object.assign(failing, { code: -111 }) : undefined);
      },
      close: () => undefined,
      on: () => undefined,
    };
    const reported: Array<[string, string]> = [];
    const notifier = createNotifier(
      { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '60000000' },
      {
        socketFactory: () => socket,
        onSendError: (error, message) => reported.push([error.message, message]),
      },
    );
    failNow = true;
    notifier.watchdog();
    assert.deepEqual(sent, ['STATUS=starting', 'WATCHDOG=1']);
    assert.deepEqual(reported, [['send -111 (ECONNREFUSED)', 'WATCHDOG=1']]);
  });

  test('close closes the socket once', () => {
    const { recording, notifier } = recordedNotifier({ NOTIFY_SOCKET: '/run/systemd/notify' });
    notifier.close();
    notifier.close();
    notifier.stopping();
    assert.equal(recording.closed(), 1);
    assert.deepEqual(
      recording.sent.map((s) => s.message),
      ['STATUS=starting'],
    );
  });
});
