/**
 * The channels a config names, built with their secrets read from their files. A secret that
 * cannot be read does not stop the daemon: the channel is built broken (every attempt fails with
 * the reason, the alerts wait in the outbox) and the reason is returned for the log and the
 * AlertsDelivering condition.
 */
import { readCappedFile } from '../../capped-file.js';
import type { AlertChannelConfig } from '../../config/schema/alerts.js';
import { emailChannel } from './email.js';
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
/** Largest CA file accepted, bytes: a few PEM certificates. */
const MAX_CA_BYTES = 256 * 1024;

/** `file`'s content trimmed; throws a message naming the channel and the file. */
function readSecret(channel: string, key: string, file: string, maxBytes = MAX_SECRET_BYTES): string {
  const secret = readCappedFile(file, `alerts.channels.${channel}.${key}: cannot read`, maxBytes)
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
      case 'email':
        return {
          channel: emailChannel(id, config, {
            password: optional('passwordFile', config.passwordFile),
            ca:
              config.caFile === undefined ? undefined : readSecret(id, 'caFile', config.caFile, MAX_CA_BYTES),
          }),
        };
    }
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    return { channel: brokenChannel(id, config.type, problem), problem };
  }
}
