import { createRequire } from 'node:module';
import { constants } from 'node:os';

/**
 * sd_notify(3) without libsystemd: plain-text datagrams (`READY=1`, `WATCHDOG=1`, `STATUS=…`,
 * `STOPPING=1`) sent to the unix datagram socket named by `$NOTIFY_SOCKET`. Node has no unix
 * datagram sockets, so the native `unix-dgram` addon sends them. systemd checks the sender's
 * PID (`NotifyAccess=main`): node must be the unit's main process.
 */

/** The part of a unix-dgram socket the notifier uses (tests inject their own). */
export interface DatagramSocket {
  /** Sends `buf[offset, offset+length)` to `path`; unix-dgram calls `callback` synchronously. */
  send(buf: Buffer, offset: number, length: number, path: string, callback: (error?: Error) => void): void;
  close(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Makes the sending socket; throws when it cannot (addon missing, socket(2) failed). */
export type SocketFactory = () => DatagramSocket;

export interface NotifierOptions {
  /** Default: a `unix-dgram` socket, loaded only when `$NOTIFY_SOCKET` is set. */
  socketFactory?: SocketFactory;
  /**
   * Told about a datagram that could not be sent after start-up (e.g. systemd re-executing).
   * Default: ignored. A notify failure never stops regulation; a watchdog that starves
   * because of it makes systemd restart the process, which is the right outcome.
   */
  onSendError?: (error: Error, message: string) => void;
  /** Process id compared with `$WATCHDOG_PID`. Default `process.pid`. */
  pid?: number;
}

/** Talks to systemd; every method is a no-op when `enabled` is false. */
export interface Notifier {
  /** True when `$NOTIFY_SOCKET` is set and its socket accepted a first datagram. */
  readonly enabled: boolean;
  /** Half of systemd's watchdog timeout, ms; undefined when no watchdog applies to this process. */
  readonly watchdogIntervalMs: number | undefined;
  /**
   * Why notify is disabled although `$NOTIFY_SOCKET` is set (no watchdog expected, so the
   * process may go on; the caller should log it). Undefined otherwise.
   */
  readonly problem: string | undefined;
  /** `READY=1`: start-up finished (Type=notify units stay "activating" until then). */
  ready(): void;
  /** `WATCHDOG=1`: keep-alive; must arrive at least every `WatchdogSec`. */
  watchdog(): void;
  /** `STATUS=…`: one line shown by `systemctl status` (newlines become spaces). */
  status(text: string): void;
  /** `STOPPING=1`: shutdown has begun. */
  stopping(): void;
  /** Closes the socket; later calls send nothing. Safe to call twice. */
  close(): void;
}

/**
 * Exit code for `NotifyUnavailableError` (78, EX_CONFIG): the unit's `RestartPreventExitStatus=78`
 * keeps systemd from restarting a process that could never be supervised.
 */
export const NOTIFY_UNAVAILABLE_EXIT_CODE = 78;

/** Thrown when systemd expects watchdog pings but the notify socket cannot be used. */
export class NotifyUnavailableError extends Error {
  override readonly name = 'NotifyUnavailableError';
}

type Env = Record<string, string | undefined>;

/**
 * The socket address in `$NOTIFY_SOCKET`: an absolute path, or `@name` for the abstract
 * namespace, returned as `\0name`. Throws on anything else (sd_notify ignores such values).
 */
export function notifySocketAddress(value: string): string {
  if (value.startsWith('@') && value.length > 1) return `\0${value.slice(1)}`;
  if (value.startsWith('/')) return value;
  throw new Error(`NOTIFY_SOCKET must be an absolute path or start with '@', got '${value}'`);
}

/**
 * Half of the watchdog timeout in `$WATCHDOG_USEC` (µs), in ms (at least 1): the interval
 * sd_watchdog_enabled(3) recommends for pings. Undefined when `WATCHDOG_USEC` is unset or
 * `WATCHDOG_PID` names another process (the watchdog is not ours). Throws on malformed values.
 */
export function watchdogIntervalMs(env: Env = process.env, pid: number = process.pid): number | undefined {
  const usecText = env.WATCHDOG_USEC;
  if (usecText === undefined || usecText === '') return undefined;
  const pidText = env.WATCHDOG_PID;
  if (pidText !== undefined && pidText !== '') {
    if (!/^[1-9][0-9]*$/.test(pidText))
      throw new Error(`WATCHDOG_PID must be a process id, got '${pidText}'`);
    if (Number(pidText) !== pid) return undefined;
  }
  const usec = /^[0-9]+$/.test(usecText) ? Number(usecText) : Number.NaN;
  if (!Number.isSafeInteger(usec) || usec <= 0) {
    throw new Error(`WATCHDOG_USEC must be a whole number of microseconds > 0, got '${usecText}'`);
  }
  return Math.max(1, Math.floor(usec / 2_000));
}

/**
 * A notifier for `$NOTIFY_SOCKET` in `env`: a no-op one when it is unset. A first `STATUS=`
 * datagram checks that the socket can be reached. When it cannot and `$WATCHDOG_USEC` applies
 * to this process, throws `NotifyUnavailableError`: the caller must exit at once rather than
 * regulate until systemd kills it, again and again. Without a watchdog it returns a disabled
 * notifier whose `problem` says why.
 */
export function createNotifier(env: Env = process.env, opts: NotifierOptions = {}): Notifier {
  const intervalMs = watchdogIntervalMs(env, opts.pid ?? process.pid);
  const socketText = env.NOTIFY_SOCKET;
  if (socketText === undefined || socketText === '') return disabledNotifier(intervalMs, undefined);
  let socket: DatagramSocket | undefined;
  try {
    const address = notifySocketAddress(socketText);
    if (address.startsWith('\0') && opts.socketFactory === undefined) {
      // unix-dgram copies the path with strncpy, which stops at the leading NUL.
      throw new Error('unix-dgram cannot address abstract-namespace sockets');
    }
    socket = (opts.socketFactory ?? unixDgramSocket)();
    // unix-dgram emits 'error' only for calls without a callback; this keeps a stray one from
    // becoming an uncaught exception.
    socket.on('error', (error) => opts.onSendError?.(error, '(socket error)'));
    const probeError = sendNow(socket, address, 'STATUS=starting');
    if (probeError) throw probeError;
    return liveNotifier(socket, address, intervalMs, opts.onSendError);
  } catch (error) {
    closeQuietly(socket);
    const reason = error instanceof Error ? error.message : String(error);
    if (intervalMs !== undefined) {
      throw new NotifyUnavailableError(
        `systemd expects watchdog pings (WATCHDOG_USEC=${env.WATCHDOG_USEC}) but the notify socket ` +
          `${socketText} cannot be used: ${reason}`,
      );
    }
    return disabledNotifier(
      intervalMs,
      `the notify socket ${socketText} cannot be used: ${reason}; systemd will not be told that homeostat is ready`,
    );
  }
}

function liveNotifier(
  socket: DatagramSocket,
  address: string,
  intervalMs: number | undefined,
  onSendError: NotifierOptions['onSendError'],
): Notifier {
  let open = true;
  const send = (message: string) => {
    if (!open) return;
    const error = sendNow(socket, address, message);
    if (error) onSendError?.(error, message);
  };
  return {
    enabled: true,
    watchdogIntervalMs: intervalMs,
    problem: undefined,
    ready: () => send('READY=1'),
    watchdog: () => send('WATCHDOG=1'),
    status: (text) => send(`STATUS=${text.replace(/[\r\n]+/g, ' ')}`),
    stopping: () => send('STOPPING=1'),
    close: () => {
      if (!open) return;
      open = false;
      closeQuietly(socket);
    },
  };
}

function disabledNotifier(intervalMs: number | undefined, problem: string | undefined): Notifier {
  const nothing = () => undefined;
  return {
    enabled: false,
    watchdogIntervalMs: intervalMs,
    problem,
    ready: nothing,
    watchdog: nothing,
    status: nothing,
    stopping: nothing,
    close: nothing,
  };
}

/** Sends one datagram; returns the error unix-dgram reported synchronously, if any. */
function sendNow(socket: DatagramSocket, address: string, message: string): Error | undefined {
  const buf = Buffer.from(message, 'utf8');
  let failure: Error | undefined;
  try {
    socket.send(buf, 0, buf.length, address, (error) => {
      if (error) failure = describeSendError(error);
    });
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  return failure;
}

/** unix-dgram reports a negative errno (`send -2`); name it so the message says what went wrong. */
function describeSendError(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  if (code === 1) return new Error(`${error.message}: socket buffer full`);
  if (typeof code !== 'number') return error;
  const name = Object.entries(constants.errno).find(([, value]) => value === -code)?.[0];
  return name ? new Error(`${error.message} (${name})`) : error;
}

function closeQuietly(socket: DatagramSocket | undefined): void {
  try {
    socket?.close();
  } catch {
    // Closing is best effort: nothing useful can be done about a failed close(2).
  }
}

/** The real socket: unix-dgram is CommonJS and native, loaded only when systemd is there. */
function unixDgramSocket(): DatagramSocket {
  const require = createRequire(import.meta.url);
  const unix = require('unix-dgram') as { createSocket(type: 'unix_dgram'): DatagramSocket };
  return unix.createSocket('unix_dgram');
}
