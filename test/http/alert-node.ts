/**
 * A node that tells alerts, for the tests of GET /api/alerts and the dashboard's alerts panel:
 * the minimal simulated heating loop `room` (a real SQLite file, the HTTP API on a free port, a
 * ManualClock), its sensor fault told after 60 s to two loopback services: `phone` (ntfy) and
 * `hook` (a webhook receiver), which tests script to refuse. Not a test file itself.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import { type FakeService, startFakeService } from '../alerts/fake-services.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { type HasAfter, tempDir } from '../support/tmp.js';
import { serving, until } from './support.js';

export interface AlertingNode {
  node: TestNode;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  phone: FakeService;
  hook: FakeService;
  dbPath: string;
}

export interface AlertingNodeOptions {
  /** The loop's name for people (it is in every alert's title). Default: none (its id). */
  loopName?: string;
  /** Another node's database and services: a restart. */
  after?: AlertingNode;
}

/** The node's config: the two channels in this order, the fault told after 60 s. */
function configText(phone: FakeService, hook: FakeService, loopName: string | undefined): string {
  return minimalSimConfigText({
    loopExtra: loopName === undefined ? '' : `    name: ${JSON.stringify(loopName)}`,
    extra: `
alerts:
  channels:
    phone: { type: ntfy, server: "${phone.url}", topic: shed-x7 }
    hook: { type: webhook, url: "${hook.url}/alerts" }
  rules: { faultedForS: 60 }
`,
  });
}

/** Starts the node (and, unless `opts.after`, the two services); all stopped after the test. */
export async function startAlertingNode(t: HasAfter, opts: AlertingNodeOptions = {}): Promise<AlertingNode> {
  const phone = opts.after?.phone ?? (await startFakeService());
  const hook = opts.after?.hook ?? (await startFakeService(''));
  if (!opts.after) t.after(() => Promise.all([phone.close(), hook.close()]).then(() => undefined));
  const dbPath = opts.after?.dbPath ?? path.join(tempDir(t, 'homeostat-alerts-'), 'state.db');
  const node = await startTestNode(configText(phone, hook, opts.loopName), dbPath, { http: { port: 0 } });
  t.after(() => node.stop());
  const base = `http://127.0.0.1:${new URL(await serving(node.node)).port}`;
  return { node, base, phone, hook, dbPath };
}

const sensorOf = (node: TestNode) => node.node.drivers.sensors.get('t') as unknown as SimSensor;
const faulted = (node: TestNode) =>
  node.daemon.statuses()[0]?.conditions.find((c) => c.type === 'Faulted')?.status;

/** Advances the clock a second at a time until the loop's Faulted condition is `status`. */
async function advanceUntilFaulted(node: TestNode, status: 'True' | 'False'): Promise<void> {
  for (let s = 0; s < 120 && faulted(node) !== status; s++) await node.clock.advance(1_000);
  assert.equal(faulted(node), status, `Faulted never became ${status}`);
}

/** Every delivery attempt on every channel has been answered and recorded. */
function settled(alerting: AlertingNode): boolean {
  const { outbox } = alerting.node.node.alerts;
  const requests = alerting.phone.requests.length + alerting.hook.requests.length;
  const recorded = outbox.recent(100).deliveries.reduce((sum, d) => sum + d.attempts, 0);
  return recorded === requests;
}

/**
 * The sensor reads NaN until the loop faults and 60 s more: the alert is told, and this returns
 * once each channel's answer to it is recorded.
 */
export async function raiseSensorFault(alerting: AlertingNode): Promise<void> {
  const before = alerting.phone.requests.length;
  sensorOf(alerting.node).injectFault({ kind: 'nan' });
  await advanceUntilFaulted(alerting.node, 'True');
  await alerting.node.clock.advance(60_000);
  await alerting.phone.received(before + 1);
  await until(() => settled(alerting), 'the channels’ answers to be recorded');
}

/** The sensor reads again: the resolution is told; returns once each answer is recorded. */
export async function resolveSensorFault(alerting: AlertingNode): Promise<void> {
  const before = alerting.hook.requests.length;
  sensorOf(alerting.node).injectFault({ kind: 'none' });
  await advanceUntilFaulted(alerting.node, 'False');
  await alerting.hook.received(before + 1);
  await until(() => settled(alerting), 'the channels’ answers to be recorded');
}

/**
 * Advances the node's clock a second at a time (a retry waits its backoff on it) until every
 * channel has taken every alert.
 */
export async function deliverAll(alerting: AlertingNode): Promise<void> {
  const { outbox } = alerting.node.node.alerts;
  const empty = () => Object.keys(outbox.backlog()).length === 0;
  for (let s = 0; s < 60 && !empty(); s++) {
    await alerting.node.clock.advance(1_000);
    await until(() => settled(alerting), 'the channels’ answers to be recorded');
  }
  await until(empty, 'every channel to take every alert');
}
