import { z } from 'zod';
import { apiSchemas } from './registry.js';

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
