/**
 * The channels: ntfy, Telegram, a webhook and MQTT (email is email.ts), each a `send` of one
 * notice. Request shapes are the services' own: ntfy's JSON publishing (https://docs.ntfy.sh/publish/#publish-as-json),
 * the Bot API's sendMessage (https://core.telegram.org/bots/api#sendmessage), and for the webhook
 * the notice itself with its id and an optional HMAC signature.
 */
import { createHmac } from 'node:crypto';
import type { AlertChannelConfig } from '../../config/schema/alerts.js';
import type { AlertNotice } from '../notice.js';
import { noticeBody, noticeText } from '../notice.js';
import { DeliveryError, post } from './http.js';

export interface AlertChannel {
  readonly id: string;
  readonly type: AlertChannelConfig['type'] | 'mqtt';
  /** Resolves once the channel took the notice; throws DeliveryError (or any error) otherwise. */
  send(notice: AlertNotice, signal: AbortSignal): Promise<void>;
  /** Connects and logs in, sends nothing (`homeostat doctor`); where a channel can (email). */
  verify?(): Promise<void>;
}

const NTFY_PRIORITY = { min: 1, low: 2, default: 3, high: 4, urgent: 5 } as const;

type Of<T extends AlertChannelConfig['type']> = Extract<AlertChannelConfig, { type: T }>;

export function ntfyChannel(id: string, config: Of<'ntfy'>, token: string | undefined): AlertChannel {
  const server = config.server.replace(/\/+$/, '');
  return {
    id,
    type: 'ntfy',
    async send(notice, signal) {
      const raised = notice.phase === 'raised';
      const body = {
        topic: config.topic,
        title: notice.title,
        message: noticeBody(notice),
        priority: raised ? NTFY_PRIORITY[config.priority] : NTFY_PRIORITY.default,
        tags: raised
          ? config.tags
          : notice.phase === 'resolved'
            ? ['white_check_mark']
            : ['information_source'],
      };
      await post({
        service: `ntfy (${new URL(server).host})`,
        url: server,
        headers: {
          'content-type': 'application/json',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify(body),
        signal,
      });
    },
  };
}

export function telegramChannel(id: string, config: Of<'telegram'>, botToken: string): AlertChannel {
  const url = `${config.apiUrl.replace(/\/+$/, '')}/bot${botToken}/sendMessage`;
  return {
    id,
    type: 'telegram',
    async send(notice, signal) {
      const body = { chat_id: config.chatId, text: noticeText(notice), disable_web_page_preview: true };
      try {
        await post({
          service: 'Telegram',
          url,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal,
        });
      } catch (error) {
        throw withTelegramRetryAfter(error);
      }
    },
  };
}

/** Telegram says how long to wait in its body (parameters.retry_after, s), not in a header. */
function withTelegramRetryAfter(error: unknown): unknown {
  if (!(error instanceof DeliveryError) || error.details.retryAfterMs !== undefined) return error;
  const match = /"retry_after"\s*:\s*(\d+)/.exec(error.details.body ?? '');
  if (!match) return error;
  return new DeliveryError(error.message, { ...error.details, retryAfterMs: Number(match[1]) * 1000 });
}

export function webhookChannel(id: string, config: Of<'webhook'>, secret: string | undefined): AlertChannel {
  return {
    id,
    type: 'webhook',
    async send(notice, signal) {
      const body = JSON.stringify(notice);
      const signature: Record<string, string> =
        secret === undefined
          ? {}
          : { 'x-homeostat-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` };
      await post({
        service: `webhook (${new URL(config.url).host})`,
        url: config.url,
        headers: { 'content-type': 'application/json', 'x-homeostat-alert-id': notice.id, ...signature },
        body,
        signal,
      });
    },
  };
}

/** `<baseTopic>/<node.id>/alerts`, not retained, QoS 1: Home Assistant automations and Node-RED route it. */
export function mqttChannel(
  topic: string,
  publish: (topic: string, payload: string) => Promise<void>,
): AlertChannel {
  return {
    id: 'mqtt',
    type: 'mqtt',
    send: (notice) => publish(topic, JSON.stringify(notice)),
  };
}

/** A channel that cannot send (its secret file unreadable): every attempt fails with the reason. */
export function brokenChannel(id: string, type: AlertChannelConfig['type'], reason: string): AlertChannel {
  return {
    id,
    type,
    send: () => Promise.reject(new DeliveryError(reason, { refused: true })),
  };
}
