/**
 * End to end on the node as `homeostat run` builds it (a real SQLite file, the simulated plant,
 * a manual clock), every channel at once against real or service-shaped parts: ntfy, Telegram
 * and a webhook (loopback servers answering as they do), email (a real SMTP server, aiosmtpd)
 * and MQTT (a real Mosquitto). A sensor pulled: exactly one alert on each channel after its
 * delay and one resolution when it returns. The webhook receiver down for 10 minutes while
 * the sensor fails three more times: once it is back, every alert is delivered once, in order.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import mqtt from 'mqtt';
import type { AlertNotice } from '../../src/alerts/notice.js';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import { waitUntil } from '../integration/helpers.js';
import { brokerFor } from '../integration/mosquitto.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { type FakeService, startFakeService } from './fake-services.js';
import { type SmtpServer, smtpSkip, startSmtpServer } from './support/smtp.js';

const MIN = 60_000;

interface Receivers {
  ntfy: FakeService;
  telegram: FakeService;
  hook: FakeService;
  smtp: SmtpServer;
  mqtt: AlertNotice[];
}

function configText(dir: string, r: Omit<Receivers, 'mqtt'>, brokerUrl: string): string {
  const botToken = path.join(dir, 'telegram.token');
  writeFileSync(botToken, '123:abc\n');
  const password = path.join(dir, 'smtp.password');
  writeFileSync(password, 's3cret\n');
  return minimalSimConfigText({
    extra: `
mqtt: { url: "${brokerUrl}" }
alerts:
  channels:
    phone: { type: ntfy, server: "${r.ntfy.url}", topic: cellar-x7 }
    family: { type: telegram, apiUrl: "${r.telegram.url}", botTokenFile: ${botToken}, chatId: 42 }
    mail: { type: email, host: 127.0.0.1, port: ${r.smtp.port}, caFile: ${r.smtp.caPath}, username: cellar, passwordFile: ${password}, from: cellar@example.org, to: brewer@example.org }
    hook: { type: webhook, url: "${r.hook.url}/alerts" }
  rules: { faultedForS: 60 }
`,
  });
}

const probe = (node: TestNode) => node.node.drivers.sensors.get('t') as unknown as SimSensor;
const faulted = (node: TestNode) =>
  node.daemon.statuses()[0]?.conditions.find((c) => c.type === 'Faulted')?.status;

/** Advances 1 s at a time until Faulted is `status`. */
async function advanceUntilFaulted(node: TestNode, status: 'True' | 'False'): Promise<void> {
  for (let s = 0; s < 120; s++) {
    await node.clock.advance(1_000);
    if (faulted(node) === status) return;
  }
  assert.fail(`Faulted never became ${status}`);
}

/** What each channel has received: its alerts' phases, in order. */
function phasesOf(r: Receivers): Record<string, string[]> {
  const json = (service: FakeService) =>
    service.requests.map((q) => JSON.parse(q.body) as Record<string, unknown>);
  return {
    ntfy: json(r.ntfy).map((b) => (String(b.title).includes('resolved') ? 'resolved' : 'raised')),
    telegram: json(r.telegram).map((b) => (String(b.text).includes('resolved') ? 'resolved' : 'raised')),
    mail: r.smtp.mails.map((m) => (m.headers.subject?.includes('resolved') ? 'resolved' : 'raised')),
    hook: json(r.hook).map((b) => String(b.phase)),
    mqtt: r.mqtt.map((n) => n.phase),
  };
}

const everyChannel = (phases: string[]) => ({
  ntfy: phases,
  telegram: phases,
  mail: phases,
  hook: phases,
  mqtt: phases,
});

test('given every channel, a sensor pulled is told once on each and resolved once; a receiver down 10 min gets every alert once, in order', {
  skip: smtpSkip,
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  const broker = await brokerFor(t);
  const [ntfy, telegram, firstHook] = await Promise.all([
    startFakeService(),
    startFakeService('{"ok":true,"result":{}}'),
    startFakeService(''),
  ]);
  const smtp = await startSmtpServer(t, { mode: 'starttls', login: 'cellar:s3cret' });
  let hook = firstHook;
  t.after(() => Promise.all([ntfy.close(), telegram.close(), hook.close()]));
  const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(() => watcher.endAsync(true));
  const onMqtt: AlertNotice[] = [];
  watcher.on('message', (_topic, payload) => onMqtt.push(JSON.parse(payload.toString()) as AlertNotice));
  await watcher.subscribeAsync('homeostat/pi/alerts', { qos: 1 });
  const receivers = (): Receivers => ({ ntfy, telegram, hook, smtp, mqtt: onMqtt });
  const total = () => Object.values(phasesOf(receivers())).reduce((sum, phases) => sum + phases.length, 0);

  const node = await startTestNode(configText(dir, receivers(), broker.url), path.join(dir, 'h.db'), {
    mqtt: {},
  });
  t.after(() => node.stop());
  await node.clock.advance(30_000);

  // A sensor pulled: nothing before faultedForS, then exactly one alert on each channel.
  probe(node).injectFault({ kind: 'stale' });
  await advanceUntilFaulted(node, 'True');
  await node.clock.advance(59_000);
  assert.equal(total(), 0, 'nothing before faultedForS');
  await node.clock.advance(1_000);
  await waitUntil(() => total() === 5, { what: 'one alert on each of the 5 channels' });
  await node.clock.advance(5 * MIN);
  assert.deepEqual(phasesOf(receivers()), everyChannel(['raised']));

  // It returns: one resolution on each.
  probe(node).injectFault({ kind: 'none' });
  await advanceUntilFaulted(node, 'False');
  await waitUntil(() => total() === 10, { what: 'one resolution on each channel' });
  assert.deepEqual(phasesOf(receivers()), everyChannel(['raised', 'resolved']));

  // The webhook receiver down for 10 min while the sensor fails three more times.
  const port = Number(new URL(hook.url).port);
  await hook.close();
  const outageStartMs = node.clock.nowMs();
  // The clock moves on only once the channels that are up took what was sent: a manual clock
  // running ahead of their real answers would time the sends out.
  const upChannelsHave = (count: number) =>
    waitUntil(() => total() - hook.requests.length === 4 * count, {
      what: `${count} messages on each channel up`,
    });
  for (let i = 1; i <= 3; i++) {
    probe(node).injectFault({ kind: 'stale' });
    await advanceUntilFaulted(node, 'True');
    await node.clock.advance(60_000);
    await upChannelsHave(2 + 2 * i - 1);
    probe(node).injectFault({ kind: 'none' });
    await advanceUntilFaulted(node, 'False');
    await upChannelsHave(2 + 2 * i);
  }
  while (node.clock.nowMs() - outageStartMs < 10 * MIN) await node.clock.advance(10_000);
  assert.equal(onMqtt.length, 8, 'the other channels were told at once');
  hook = await startFakeService('', port);

  // Back: within its longest backoff (10 min) every alert arrives, once, in order.
  for (let s = 0; s < 66 && hook.requests.length < 6; s++) {
    await node.clock.advance(10_000);
    if (hook.requests.length > 0) await waitUntil(() => hook.requests.length === 6, { what: 'the backlog' });
  }
  const delivered = hook.requests.map((q) => JSON.parse(q.body) as AlertNotice);
  assert.deepEqual(
    delivered.map((n) => n.phase),
    ['raised', 'resolved', 'raised', 'resolved', 'raised', 'resolved'],
  );
  assert.equal(new Set(delivered.map((n) => n.id)).size, 6, 'each once');
  assert.deepEqual(
    delivered.map((n) => n.id),
    onMqtt.slice(2).map((n) => n.id),
    'in the order they were raised',
  );
  await node.clock.advance(10 * MIN);
  assert.equal(hook.requests.length, 6, 'nothing twice');
});
