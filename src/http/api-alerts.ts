/**
 * The alert routes: GET /api/alerts, the recent alerts and their delivery on each channel;
 * POST /api/alerts/test, a test alert through each channel, at once, and what each answered.
 */
import {
  type AlertsResponse,
  type AlertTestResponse,
  alertTestRequest,
} from '../operations/alert-schemas.js';
import { alertsView } from './alert-views.js';
import type { ApiDeps } from './api-deps.js';
import { queryCount } from './query.js';
import { HttpError } from './respond.js';

/** Alerts GET /api/alerts answers by default, and at most (the outbox keeps 200 delivered rows). */
export const DEFAULT_RECENT_ALERTS = 50;
export const MAX_RECENT_ALERTS = 200;

const NO_ALERTS = 'this node sends no alerts';
const NO_CHANNEL = 'no alert channel: add alerts.channels to the config (and a broker for mqtt)';

/** GET /api/alerts: 404 when the node sends no alerts (the dashboard then shows no panel). */
export function recentAlerts(deps: ApiDeps, url: URL): { body: AlertsResponse } {
  const alerts = deps.alerts;
  if (!alerts) throw new HttpError(404, NO_ALERTS);
  const channels = alerts.channels();
  if (channels.length === 0) throw new HttpError(404, NO_CHANNEL);
  const limit = queryCount(url, 'limit', DEFAULT_RECENT_ALERTS, MAX_RECENT_ALERTS);
  // One row per alert and channel: enough rows for `limit` alerts on every channel, and one
  // alert more, so the last one shown is not cut short of a channel.
  return { body: alertsView(alerts.recent((limit + 1) * channels.length), limit) };
}

export async function testAlerts(deps: ApiDeps, body: Buffer): Promise<{ body: AlertTestResponse }> {
  const alerts = deps.alerts;
  if (!alerts) throw new HttpError(404, NO_ALERTS);
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
  if (channels.length === 0) throw new HttpError(404, NO_CHANNEL);
  if (channel !== undefined && !channels.includes(channel)) {
    throw new HttpError(404, `no alert channel "${channel}" (channels: ${channels.join(', ')})`);
  }
  return { body: { results: await alerts.test(channel) } };
}
