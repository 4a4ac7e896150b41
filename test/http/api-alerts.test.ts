/**
 * GET /api/alerts on a running node (a real SQLite file, the HTTP API on a free port): the
 * recent alerts, newest first, one entry per alert with its delivery on each channel (taken,
 * or waiting with its attempts and last error), each channel's backlog, strictly in the
 * documented shape; what was delivered is read back from the database after a restart; a node
 * without alert channels answers 404.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AlertsResponse, alertsResponse } from '../../src/operations/alert-schemas.js';
import { raiseSensorFault, resolveSensorFault, startAlertingNode } from './alert-node.js';
import { getJson, parseStrictly, startApiNode, until } from './support.js';

/** Every test waits on real sockets: it gives up instead of hanging when an answer never comes. */
const WAIT = { timeout: 30_000 };
const REFUSED = { status: 503, body: 'down for maintenance' };

async function alertsOf(base: string, query = ''): Promise<AlertsResponse> {
  const answer = await getJson<AlertsResponse>(base, `/api/alerts${query}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  parseStrictly(alertsResponse, answer.body, `GET /api/alerts${query}`);
  return answer.body;
}

test(
  'given a phone that refuses and a webhook that takes it, when a sensor fault is told, then the alert is listed once: delivered to hook, waiting on phone with its attempt and error',
  WAIT,
  async (t) => {
    const alerting = await startAlertingNode(t);
    alerting.phone.script.push(...Array(20).fill(REFUSED));
    await raiseSensorFault(alerting);

    const { alerts, channels, note } = await alertsOf(alerting.base);
    assert.equal(alerts.length, 1);
    const { id, createdAt, message, deliveries, ...told } = alerts[0]!;
    assert.deepEqual(told, {
      phase: 'raised',
      severity: 'critical',
      kind: 'faulted',
      title: 'room: sensor fault, actuators safe',
      loop: 'room',
    });
    assert.match(message, /safe state: reading is NaN/);
    // `<node>/<streak>/<when it started>/raised`: told faultedForS (60 s) after the fault started.
    const startedAtMs = Number(/^pi\/room\/faulted\/(\d+)\/raised$/.exec(id)?.[1]);
    assert.equal(Date.parse(createdAt) - startedAtMs, 60_000, `${id} told at ${createdAt}`);
    const [phone, hook] = deliveries;
    const { lastError: phoneError, ...phoneState } = phone!;
    assert.deepEqual(phoneState, {
      channel: 'phone',
      delivered: false,
      deliveredAt: null,
      attempts: 1,
      heldBack: 0,
    });
    assert.match(phoneError ?? '', /^ntfy \(127\.0\.0\.1:\d+\) answered HTTP 503: down for maintenance/);
    const { deliveredAt, ...hookState } = hook!;
    assert.deepEqual(hookState, {
      channel: 'hook',
      delivered: true,
      attempts: 1,
      lastError: null,
      heldBack: 0,
    });
    assert.ok(Date.parse(deliveredAt ?? '') >= Date.parse(createdAt), `delivered at ${deliveredAt}`);
    assert.deepEqual(channels, [
      { channel: 'phone', undelivered: 1, dropped: 0 },
      { channel: 'hook', undelivered: 0, dropped: 0 },
    ]);
    assert.equal(note, undefined);
  },
);

test(
  'given the fault resolved, then its resolution is listed first, and ?limit=1 answers only it',
  WAIT,
  async (t) => {
    const alerting = await startAlertingNode(t);
    alerting.phone.script.push(...Array(20).fill(REFUSED));
    await raiseSensorFault(alerting);
    await resolveSensorFault(alerting);

    const { alerts, channels } = await alertsOf(alerting.base);
    assert.deepEqual(
      alerts.map((alert) => [alert.phase, alert.title]),
      [
        ['resolved', 'room: resolved: sensor fault, actuators safe'],
        ['raised', 'room: sensor fault, actuators safe'],
      ],
    );
    const [resolved, raised] = alerts;
    // The phone is still refusing its alert, so the resolution waits behind it, never tried.
    assert.deepEqual(
      resolved?.deliveries.map((d) => [d.channel, d.delivered, d.attempts, d.lastError]),
      [
        ['phone', false, 0, null],
        ['hook', true, 1, null],
      ],
    );
    const phoneRaised = raised?.deliveries[0];
    assert.equal(phoneRaised?.delivered, false);
    assert.ok(
      (phoneRaised?.attempts ?? 0) >= 1,
      'retried with backoff meanwhile: at least the first attempt',
    );
    assert.deepEqual(channels[0], { channel: 'phone', undelivered: 2, dropped: 0 });

    const newest = await alertsOf(alerting.base, '?limit=1');
    assert.deepEqual(
      newest.alerts.map((alert) => alert.phase),
      ['resolved'],
    );
    assert.equal(newest.alerts[0]?.deliveries.length, 2, 'both channels, though the rows were limited');
    for (const limit of ['0', '201', 'ten']) {
      const refused = await getJson<{ error: string }>(alerting.base, `/api/alerts?limit=${limit}`);
      assert.equal(refused.status, 400, limit);
      assert.match(refused.body.error, /^limit: .* must be a whole number from 1 to 200$/);
    }
  },
);

test(
  'given alerts the phone refused before a stop, after a restart on the same database they are listed delivered, every attempt counted',
  WAIT,
  async (t) => {
    const first = await startAlertingNode(t);
    first.phone.script.push(REFUSED);
    await raiseSensorFault(first);
    await first.node.stop();

    const second = await startAlertingNode(t, { after: first });
    await first.phone.received(2); // the one refused, then the one taken after the restart
    const { outbox } = second.node.node.alerts;
    await until(() => Object.keys(outbox.backlog()).length === 0, 'the phone’s answer to be recorded');
    const { alerts, channels } = await alertsOf(second.base);
    assert.deepEqual(
      alerts.map((alert) => alert.deliveries.map((d) => [d.channel, d.delivered, d.attempts])),
      [
        [
          ['phone', true, 2],
          ['hook', true, 1],
        ],
      ],
    );
    assert.deepEqual(
      channels.map((c) => c.undelivered),
      [0, 0],
    );
  },
);

test(
  'given a node without alert channels, then GET /api/alerts answers 404 and says what to configure',
  WAIT,
  async (t) => {
    const node = await startApiNode(t);
    const answer = await getJson<{ error: string }>(node.base, '/api/alerts');
    assert.equal(answer.status, 404);
    assert.equal(
      answer.body.error,
      'no alert channel: add alerts.channels to the config (and a broker for mqtt)',
    );
  },
);
