/**
 * Alerts on the node as `homeostat run` builds it (a real SQLite file, the simulated plant, a
 * manual clock), told to a loopback webhook receiver: a sensor that reads NaN is told once after
 * faultedForS and resolved once when it reads again; the journal hears of the fault at once;
 * a receiver that refuses shows in AlertsDelivering, and what it refused before a stop is
 * delivered after the restart; a profile that finished is told once.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { AlertNotice } from '../../src/alerts/notice.js';
import { statusCommand } from '../../src/commands/inspect.js';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import { minimalSimConfigText } from '../support/config.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { type FakeService, startFakeService } from './fake-services.js';

function configFor(hook: FakeService, loopExtra = ''): string {
  return minimalSimConfigText({
    loopExtra,
    extra: `
alerts:
  channels:
    hook: { type: webhook, url: "${hook.url}/alerts" }
  rules: { faultedForS: 60 }
`,
  });
}

const notices = (hook: FakeService): AlertNotice[] =>
  hook.requests.map((r) => JSON.parse(r.body) as AlertNotice);
const probe = (node: TestNode) => node.node.drivers.sensors.get('t') as unknown as SimSensor;
const conditionOf = (node: TestNode, type: string) =>
  node.daemon.statuses()[0]?.conditions.find((c) => c.type === type);
const alertsCondition = (node: TestNode) => conditionOf(node, 'AlertsDelivering');

/** Advances the clock 1 s at a time until the loop shows Faulted as `status`; the time it took, ms. */
async function advanceUntilFaulted(node: TestNode, status: 'True' | 'False'): Promise<number> {
  for (let ms = 1_000; ms <= 120_000; ms += 1_000) {
    await node.clock.advance(1_000);
    if (conditionOf(node, 'Faulted')?.status === status) return ms;
  }
  assert.fail(`Faulted never became ${status}`);
}

/** A test that waits for a request gives up instead of hanging when it never comes. */
const WAIT = { timeout: 30_000 };

test(
  'given a heating loop, when its sensor reads NaN for 2 min and then recovers, then one alert and one resolution are told',
  WAIT,
  async (t) => {
    const hook = await startFakeService('');
    t.after(() => hook.close());
    const log = recordingLogger();
    const node = await startTestNode(configFor(hook), path.join(tempDir(t), 'h.db'), { logger: log.logger });
    t.after(() => node.stop());
    await node.clock.advance(60_000);
    probe(node).injectFault({ kind: 'nan' });
    await advanceUntilFaulted(node, 'True');
    await node.clock.advance(58_000);
    assert.equal(hook.requests.length, 0, 'not before faultedForS');
    assert.equal(
      log.atLevel(LogLevel.warn).filter((r) => /^room: fault: /.test(r.msg)).length,
      1,
      'the journal hears of the fault at once, at warning, once',
    );
    await node.clock.advance(2_000);
    await hook.received(1);
    const [raised] = notices(hook);
    assert.equal(raised?.phase, 'raised');
    assert.equal(raised?.loop, 'room');
    assert.equal(raised?.title, 'room: sensor fault, actuators safe');
    assert.match(raised?.message ?? '', /safe state/);
    await node.clock.advance(60_000);
    assert.equal(hook.requests.length, 1, 'once per streak');

    probe(node).injectFault({ kind: 'none' });
    await advanceUntilFaulted(node, 'False');
    await hook.received(2);
    const resolved = notices(hook)[1];
    assert.equal(resolved?.phase, 'resolved');
    assert.equal(resolved?.streakId, raised?.streakId);
    assert.match(resolved?.message ?? '', /^after 2 min/);
    assert.ok(log.messages(LogLevel.info).some((m) => /^room: fault cleared after 2 min/.test(m)));
    await node.clock.advance(120_000);
    assert.equal(hook.requests.length, 2);
    assert.equal(alertsCondition(node)?.status, 'True');
  },
);

test(
  'given a receiver that refuses, the condition says so and the alert waits; after a restart on the same database it is delivered once',
  WAIT,
  async (t) => {
    const hook = await startFakeService('');
    t.after(() => hook.close());
    const dbPath = path.join(tempDir(t), 'h.db');
    hook.script.push({ status: 503, body: 'down for maintenance' }, { status: 503 }, { status: 503 });
    const first = await startTestNode(configFor(hook), dbPath);
    await first.clock.advance(30_000);
    probe(first).injectFault({ kind: 'nan' });
    await advanceUntilFaulted(first, 'True');
    await first.clock.advance(60_000);
    await hook.received(1);
    await first.clock.advance(1_000);
    const failing = alertsCondition(first);
    assert.equal(failing?.status, 'False');
    assert.equal(failing?.reason, 'DeliveryFailing');
    assert.match(
      failing?.message ?? '',
      /^hook: webhook \(127\.0\.0\.1:\d+\) answered HTTP 503: down for maintenance/,
    );
    await first.stop();
    const attemptsBefore = hook.requests.length;
    const printed: string[] = [];
    statusCommand({ dbPath, json: false }, (line) => printed.push(line));
    assert.match(printed.at(-1) ?? '', /^alerts: 1 undelivered \(hook 1\), the oldest from 2026-01-01T00:0/);

    hook.script.length = 0;
    const second = await startTestNode(configFor(hook), dbPath);
    t.after(() => second.stop());
    await hook.received(attemptsBefore + 1);
    await second.clock.advance(1_000);
    const delivered = notices(hook).slice(attemptsBefore);
    assert.equal(delivered[0]?.phase, 'raised');
    assert.equal(delivered[0]?.id, notices(hook)[0]?.id, 'the same alert, the same id');
    assert.equal(alertsCondition(second)?.status, 'True');
  },
);

test(
  'given a started profile, when its last step ends, then one event tells it finished',
  WAIT,
  async (t) => {
    const hook = await startFakeService('');
    t.after(() => hook.close());
    const profile = `    profiles:
      lager:
        steps:
          - { holdS: 60, setpoint: 12 }
          - { rampS: 60, to: 8 }`;
    const node = await startTestNode(configFor(hook, profile), path.join(tempDir(t), 'h.db'));
    t.after(() => node.stop());
    node.store.desired.profileCommand('room', { action: 'start', name: 'lager' }, 'cli');
    await node.clock.advance(119_000);
    assert.equal(hook.requests.length, 0, 'not while it runs');
    for (let s = 0; s < 10; s++) await node.clock.advance(1_000);
    await hook.received(1);
    await node.clock.advance(60_000);
    assert.equal(hook.requests.length, 1, 'told once');
    const [finished] = notices(hook);
    assert.equal(finished?.kind, 'profile');
    assert.equal(finished?.phase, 'event');
    assert.equal(finished?.title, 'room: profile "lager" finished');
    assert.equal(finished?.message, 'all 2 steps done; it holds its last setpoint, 8, until it is stopped');
  },
);
