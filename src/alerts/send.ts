import type { AlertChannel } from './channels/index.js';
import type { AlertNotice } from './notice.js';

/**
 * `channel.send`, settled when `signal` aborts even if the channel does not listen to it (MQTT's
 * publish waits for its own acknowledgement): a send is always bounded by its timeout.
 */
export function sendUntilAborted(
  channel: AlertChannel,
  notice: AlertNotice,
  signal: AbortSignal,
): Promise<void> {
  return Promise.race([
    channel.send(notice, signal),
    new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
  ]);
}
