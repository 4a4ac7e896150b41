/**
 * The channels a config names, built with their secrets read from their files. A secret that
 * cannot be read does not stop the daemon: the channel is built broken (every attempt fails with
 * the reason, the alerts wait in the outbox) and the reason is returned for the log and the
 * AlertsDelivering condition.
 */
import { readCappedFile } from '../../capped-file.js';
import type { AlertChannelConfig } from '../../config/schema/alerts.js';
import {
  type AlertChannel,
  brokenChannel,
  ntfyChannel,
  telegramChannel,
  webhookChannel,
} from './services.js';

export { DeliveryError } from './http.js';
export type { AlertChannel } from './services.js';

/** Largest secret file accepted, bytes: a token is a line. */
const MAX_SECRET_BYTES = 4_096;

/** `file`'s content trimmed; throws a message naming the channel and the file. */
function readSecret(channel: string, key: string, file: string): string {
  const secret = readCappedFile(file, `alerts.channels.${channel}.${key}: cannot read`, MAX_SECRET_BYTES)
    .toString('utf8')
    .trim();
  if (secret === '') throw new Error(`alerts.channels.${channel}.${key}: ${file} is empty`);
  return secret;
}

export function buildChannel(
  id: string,
  config: AlertChannelConfig,
): { channel: AlertChannel; problem?: string } {
  const optional = (key: string, file: string | undefined) => (file ? readSecret(id, key, file) : undefined);
  try {
    switch (config.type) {
      case 'ntfy':
        return { channel: ntfyChannel(id, config, optional('tokenFile', config.tokenFile)) };
      case 'telegram':
        return { channel: telegramChannel(id, config, readSecret(id, 'botTokenFile', config.botTokenFile)) };
      case 'webhook':
        return { channel: webhookChannel(id, config, optional('secretFile', config.secretFile)) };
    }
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    return { channel: brokenChannel(id, config.type, problem), problem };
  }
}
