/** Doctor check 6: systemd's notify socket. */
import type { CheckResult } from '../../kinds/types.js';
import { createNotifier, type NotifierOptions, notifySocketAddress } from '../../systemd/notify.js';
import { failedCheck } from './shared.js';

/**
 * The notify socket in `$NOTIFY_SOCKET`, when set: its address is valid and it accepts a
 * datagram. Only the notifier's `STATUS=` probe is sent, never `READY=1`; `WATCHDOG_USEC` is
 * left out so an unusable socket is reported rather than thrown.
 */
export function checkNotify(
  env: NodeJS.ProcessEnv = process.env,
  opts: Pick<NotifierOptions, 'socketFactory'> = {},
): CheckResult {
  const name = 'systemd notify';
  const socket = env.NOTIFY_SOCKET;
  if (socket === undefined || socket === '') {
    return { name, status: 'skip', detail: 'not running under systemd (NOTIFY_SOCKET unset)' };
  }
  const fix =
    'the unit needs Type=notify with NotifyAccess=main and the unix-dgram addon built for this Node ' +
    '(npm rebuild unix-dgram)';
  try {
    notifySocketAddress(socket);
  } catch (error) {
    return failedCheck(name, error, fix);
  }
  const notifier = createNotifier({ NOTIFY_SOCKET: socket }, opts);
  try {
    if (!notifier.enabled) {
      return { name, status: 'fail', detail: notifier.problem ?? `${socket} cannot be used`, fix };
    }
    return { name, status: 'ok', detail: `${socket} accepts datagrams` };
  } finally {
    notifier.close();
  }
}
