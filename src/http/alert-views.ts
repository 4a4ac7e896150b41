/**
 * GET /api/alerts's answer from the outbox's recent deliveries: one entry per alert (its notice
 * id), newest first, with its delivery on each channel, so a person sees at once which channel
 * has not taken it. Pure.
 */
import type { AlertDelivery } from '../alerts/outbox.js';
import type { AlertsResponse } from '../operations/alert-schemas.js';
import type { RecentAlerts } from './api-deps.js';
import { isoTime } from './views.js';

type AlertView = AlertsResponse['alerts'][number];

/** The newest `limit` alerts of `recent` (whose deliveries are newest first). */
export function alertsView(recent: RecentAlerts, limit: number): AlertsResponse {
  const order = (channel: string) => {
    const index = recent.channels.indexOf(channel);
    return index === -1 ? recent.channels.length : index;
  };
  const alerts = new Map<string, { view: AlertView; channels: AlertDelivery[] }>();
  for (const delivery of recent.deliveries) {
    const { notice } = delivery;
    let alert = alerts.get(notice.id);
    if (!alert) {
      if (alerts.size === limit) continue;
      alert = { view: alertOf(delivery), channels: [] };
      alerts.set(notice.id, alert);
    }
    alert.channels.push(delivery);
  }
  return {
    alerts: [...alerts.values()].map(({ view, channels }) => ({
      ...view,
      deliveries: channels
        .sort((a, b) => order(a.channel) - order(b.channel) || a.channel.localeCompare(b.channel))
        .map(deliveryOf),
    })),
    channels: recent.channels.map((channel) => ({
      channel,
      undelivered: recent.backlog[channel] ?? 0,
      dropped: recent.dropped[channel] ?? 0,
    })),
    ...(recent.unreadable === undefined
      ? {}
      : { note: `the database cannot be read (${recent.unreadable}): only undelivered alerts are listed` }),
  };
}

function alertOf({ notice }: AlertDelivery): AlertView {
  return {
    id: notice.id,
    phase: notice.phase,
    severity: notice.severity,
    kind: notice.kind,
    title: notice.title,
    message: notice.message,
    loop: notice.loop ?? null,
    createdAt: isoTime(notice.atMs),
    deliveries: [],
  };
}

function deliveryOf(delivery: AlertDelivery): AlertView['deliveries'][number] {
  return {
    channel: delivery.channel,
    delivered: delivery.deliveredAtMs !== undefined,
    deliveredAt: delivery.deliveredAtMs === undefined ? null : isoTime(delivery.deliveredAtMs),
    attempts: delivery.attempts,
    lastError: delivery.lastError ?? null,
    heldBack: delivery.notice.suppressed ?? 0,
  };
}
