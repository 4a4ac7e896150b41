/** POST /api/alerts/test: a test alert through each channel, at once, and what each answered. */
import { type AlertTestResponse, alertTestRequest } from '../operations/alert-schemas.js';
import type { ApiDeps } from './api-deps.js';
import { HttpError } from './respond.js';

export async function testAlerts(deps: ApiDeps, body: Buffer): Promise<{ body: AlertTestResponse }> {
  const alerts = deps.alerts;
  if (!alerts) throw new HttpError(404, 'this node sends no alerts');
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON: send {} or {"channel": "phone"}');
  }
  const request = alertTestRequest.safeParse(parsed);
  if (!request.success)
    throw new HttpError(400, 'send {} or {"channel": "<an alerts.channels id, or mqtt>"}');
  const { channel } = request.data;
  const channels = alerts.channels();
  if (channels.length === 0) {
    throw new HttpError(404, 'no alert channel: add alerts.channels to the config (and a broker for mqtt)');
  }
  if (channel !== undefined && !channels.includes(channel)) {
    throw new HttpError(404, `no alert channel "${channel}" (channels: ${channels.join(', ')})`);
  }
  return { body: { results: await alerts.test(channel) } };
}
