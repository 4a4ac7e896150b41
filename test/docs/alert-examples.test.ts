/**
 * The ready-made alert examples stay true to the code: the Prometheus rules name only series
 * /metrics exports (or `up`), and the Home Assistant automation listens where alerts are
 * published and reads fields an alert has.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import YAML from 'yaml';
import type { AlertNotice } from '../../src/alerts/notice.js';
import type { LoopStatus } from '../../src/core/status.js';
import { NodeMetrics } from '../../src/http/metrics.js';
import { topicsFor } from '../../src/mqtt/topics.js';

const read = (name: string) =>
  YAML.parse(readFileSync(new URL(`../../docs/examples/${name}`, import.meta.url), 'utf8'));

test('docs/examples/prometheus-rules.yml: every rule names series that /metrics exports', async () => {
  const rules = read('prometheus-rules.yml') as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const metrics = new NodeMetrics({ nodeId: 'n', collectProcess: false });
  metrics.setCollectors({
    storageHealthy: () => true,
    alerts: () => [{ channel: 'phone', sent: 1, failed: 0, dropped: 0, undelivered: 0 }],
  });
  metrics.loopStatus({
    loop: 'room',
    conditions: [
      {
        type: 'Faulted',
        status: 'False',
        reason: 'NoFault',
        message: '',
        lastTransitionMs: 0,
        observedGeneration: 1,
      },
    ],
  } as unknown as LoopStatus);
  const exported = new Set([...(await metrics.render()).matchAll(/^(homeostat_\w+)/gm)].map((m) => m[1]));
  const alerts = rules.groups.flatMap((group) => group.rules);
  assert.deepEqual(
    alerts.map((rule) => rule.alert),
    ['HomeostatDown', 'HomeostatLoopFaulted', 'HomeostatStorageUnhealthy', 'HomeostatAlertsUndelivered'],
  );
  for (const rule of alerts) {
    for (const [name] of rule.expr.matchAll(/homeostat_\w+/g)) {
      assert.ok(exported.has(name), `${rule.alert}: ${name} is not exported`);
    }
  }
});

test("docs/examples/home-assistant-automation.yaml: listens on every node's alerts topic and reads an alert's title and message", () => {
  const automation = read('home-assistant-automation.yaml') as {
    triggers: Array<{ trigger: string; topic: string }>;
    actions: Array<{ data: Record<string, string> }>;
  };
  const topic = automation.triggers[0]?.topic ?? '';
  assert.equal(automation.triggers[0]?.trigger, 'mqtt');
  const alertsTopic = `${topicsFor('homeostat', 'cellar').base}/alerts`;
  assert.equal(alertsTopic.replace('/cellar/', '/+/'), topic);
  const fields = Object.values(automation.actions[0]?.data ?? {}).flatMap((text) =>
    [...text.matchAll(/payload_json\.(\w+)/g)].map((m) => m[1]),
  );
  const notice: Record<keyof AlertNotice, true> = {
    id: true,
    streakId: true,
    node: true,
    loop: true,
    kind: true,
    phase: true,
    severity: true,
    title: true,
    message: true,
    atMs: true,
    suppressed: true,
  };
  assert.deepEqual(fields, ['title', 'message']);
  for (const field of fields) assert.ok(field && field in notice, field);
});
