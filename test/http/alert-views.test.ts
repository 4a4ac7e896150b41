/**
 * GET /api/alerts's answer from the outbox's deliveries (src/http/alert-views.ts), a pure
 * function: one entry per alert, its channels in the config's order, the hourly cap's count,
 * and a note when the database could not be read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AlertNotice } from '../../src/alerts/notice.js';
import type { AlertDelivery } from '../../src/alerts/outbox.js';
import { alertsView } from '../../src/http/alert-views.js';
import type { RecentAlerts } from '../../src/http/api-deps.js';

function notice(n: number, extra: Partial<AlertNotice> = {}): AlertNotice {
  return {
    id: `pi/room/band/${n}/raised`,
    node: 'pi',
    loop: 'room',
    kind: 'band',
    phase: 'raised',
    severity: 'critical',
    title: `Room: outside the alert band ${n}`,
    message: '31.2 °C, above 30',
    atMs: Date.UTC(2026, 0, 1, 0, n),
    ...extra,
  };
}

function delivery(channel: string, told: AlertNotice, deliveredAtMs?: number): AlertDelivery {
  return {
    channel,
    notice: told,
    createdAtMs: told.atMs,
    attempts: deliveredAtMs === undefined ? 0 : 1,
    lastError: undefined,
    deliveredAtMs,
  };
}

const recent = (deliveries: AlertDelivery[], more: Partial<RecentAlerts> = {}): RecentAlerts => ({
  deliveries,
  channels: ['phone', 'mqtt'],
  backlog: { phone: 1 },
  dropped: { mqtt: 2 },
  ...more,
});

test('given each alert on several channels, then one entry per alert, its channels in the config’s order, a channel no longer configured last', () => {
  const second = notice(2);
  const first = notice(1, { suppressed: 3 });
  const view = alertsView(
    recent([
      delivery('mqtt', second, second.atMs),
      delivery('phone', second),
      delivery('old', first, first.atMs),
      delivery('mqtt', first, first.atMs),
      delivery('phone', first, first.atMs + 1_000),
    ]),
    50,
  );
  assert.deepEqual(
    view.alerts.map((alert) => [alert.createdAt, alert.deliveries.map((d) => `${d.channel} ${d.delivered}`)]),
    [
      ['2026-01-01T00:02:00.000Z', ['phone false', 'mqtt true']],
      ['2026-01-01T00:01:00.000Z', ['phone true', 'mqtt true', 'old true']],
    ],
  );
  assert.equal(view.alerts[1]?.deliveries[0]?.deliveredAt, '2026-01-01T00:01:01.000Z');
  assert.deepEqual(
    view.alerts[1]?.deliveries.map((d) => d.heldBack),
    [3, 3, 3],
    'the cap’s count rides on the notice',
  );
  assert.deepEqual(view.channels, [
    { channel: 'phone', undelivered: 1, dropped: 0 },
    { channel: 'mqtt', undelivered: 0, dropped: 2 },
  ]);
  assert.equal(view.note, undefined);
});

test('given more alerts than the limit, then the newest `limit` with all their channels; a node-wide alert has no loop', () => {
  const storage = notice(3, { id: 'pi/storage/3/raised', kind: 'storage', title: 'pi: database unusable' });
  delete storage.loop;
  const view = alertsView(
    recent([
      delivery('phone', storage),
      delivery('phone', notice(2)),
      delivery('mqtt', storage),
      delivery('mqtt', notice(2)),
      delivery('mqtt', notice(1)),
    ]),
    2,
  );
  assert.deepEqual(
    view.alerts.map((alert) => [alert.title, alert.loop, alert.deliveries.length]),
    [
      ['pi: database unusable', null, 2],
      ['Room: outside the alert band 2', 'room', 2],
    ],
  );
});

test('given a database that could not be read, then the answer says so', () => {
  const view = alertsView(recent([delivery('phone', notice(1))], { unreadable: 'disk I/O error' }), 50);
  assert.equal(view.alerts.length, 1);
  assert.equal(view.note, 'the database cannot be read (disk I/O error): only undelivered alerts are listed');
});
