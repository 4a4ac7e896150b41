import { z } from 'zod';
import { apiSchemas, isoTime } from './registry.js';

/** Body of POST /api/alerts/test: one channel, or every one. */
export const alertTestRequest = z
  .object({
    channel: z.string().max(64).optional().describe('One of alerts.channels, or mqtt; absent: every channel'),
  })
  .register(apiSchemas, { id: 'AlertTestRequest' });

/** What each channel answered a test alert, sent at once (not through the outbox). */
export const alertTestResponse = z
  .object({
    results: z.array(
      z.object({
        channel: z.string(),
        type: z.string().describe('ntfy, telegram, email, webhook or mqtt'),
        delivered: z.boolean(),
        answer: z.string().describe('What the channel answered: "delivered", or why it failed'),
        tookMs: z.number(),
      }),
    ),
  })
  .register(apiSchemas, { id: 'AlertTestResponse' });

export type AlertTestResponse = z.infer<typeof alertTestResponse>;

/** One alert's fate on one channel. */
export const alertDeliveryView = z
  .object({
    channel: z.string(),
    delivered: z.boolean().describe('The channel took it'),
    deliveredAt: isoTime.nullable().describe('When the channel took it; null while it waits'),
    attempts: z.number().int().describe('Attempts so far (the one that delivered included)'),
    lastError: z.string().nullable().describe("The last failed attempt's error; null once delivered"),
    heldBack: z
      .number()
      .int()
      .describe('Alerts the hourly cap held back on this channel before this one (told with it)'),
  })
  .register(apiSchemas, { id: 'AlertDelivery' });

/** One alert (one notice id) as told, and its delivery on each channel it went to. */
export const alertView = z
  .object({
    id: z.string().describe('The notice id: the same on every channel and every retry'),
    phase: z.enum(['raised', 'resolved', 'event', 'test']),
    severity: z.enum(['critical', 'warning', 'info']),
    kind: z
      .string()
      .describe('faulted, latched, band, unconfirmed, interlock, storage, peer, autotune, profile'),
    title: z.string(),
    message: z.string(),
    loop: z.string().nullable().describe("The loop's id; null for the node's own (the database, a peer)"),
    createdAt: isoTime.describe('When it was told'),
    deliveries: z
      .array(alertDeliveryView)
      .describe("Per channel, in the config's order; a channel the hourly cap held it back from has none"),
  })
  .register(apiSchemas, { id: 'Alert' });

/** A channel alerts go to, and what waits for it. */
export const alertChannelView = z
  .object({
    channel: z.string(),
    undelivered: z.number().int().describe('Alerts waiting for this channel'),
    dropped: z.number().int().describe('Alerts dropped since the start: the outbox over its limit'),
  })
  .register(apiSchemas, { id: 'AlertChannel' });

/** GET /api/alerts: the recent alerts, newest first, and each channel's backlog. */
export const alertsResponse = z
  .object({
    alerts: z.array(alertView),
    channels: z.array(alertChannelView).describe("Every channel, in the config's order (mqtt last)"),
    note: z
      .string()
      .optional()
      .describe('Why the list may be short: the database could not be read (then only undelivered alerts)'),
  })
  .register(apiSchemas, { id: 'Alerts' });

export type AlertsResponse = z.infer<typeof alertsResponse>;
