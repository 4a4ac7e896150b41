/**
 * The MQTT half of `homeostat safe`: best effort only. If the broker answers within a short
 * time, every MQTT actuator is sent its safe command (the absolute OFF, or the safe level), QoS 1
 * and not retained, exactly as the daemon would. If it does not, nothing waits for it: a plug
 * with a dead man's switch (`deadManS`) turns itself off anyway, and the report says which
 * plugs have none. The exit code of `safe` never depends on this part (the broker may be the
 * very thing that is down).
 */
import mqtt from 'mqtt';
import type { Config } from '../config/schema.js';
import { mqttSettings } from '../mqtt/setup.js';
import { redactUrl } from '../redact.js';
import type { SafeBroker, SafePlug } from '../safe/plan.js';

/** Per actuator id: `sent` (the broker acknowledged it), or why not. */
export type MqttSafeResult = Map<string, { sent: true } | { sent: false; reason: string }>;

/**
 * Connects (at most `timeoutMs` for connecting and every acknowledgement together), publishes
 * every command, and disconnects. Never rejects.
 */
export async function publishSafeCommands(
  broker: SafeBroker | undefined,
  commands: readonly SafePlug[],
  opts: { timeoutMs: number; mqttUrl?: string | undefined },
): Promise<MqttSafeResult> {
  const results: MqttSafeResult = new Map();
  const fail = (reason: string) => {
    for (const command of commands)
      if (!results.has(command.id)) results.set(command.id, { sent: false, reason });
    return results;
  };
  if (commands.length === 0) return results;
  if (!broker) return fail('no broker configured');
  let settings: ReturnType<typeof mqttSettings>;
  try {
    // mqttSettings reads only the node and mqtt blocks (and the password and TLS files they name):
    // the last applied config keeps just those.
    const blocks: Pick<Config, 'node' | 'mqtt'> = broker;
    settings = mqttSettings(blocks as Config, opts.mqttUrl);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (!settings) return fail('no broker configured');
  const url = redactUrl(settings.url);
  const client = connectSafeClient(settings, opts.timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
  });
  const connected = new Promise<'connected' | string>((resolve) => {
    client.once('connect', () => resolve('connected'));
    client.once('error', (error) => resolve(error.message));
    client.once('close', () => resolve('connection closed'));
  });
  try {
    const outcome = await Promise.race([connected, deadline]);
    if (outcome === 'timeout') return fail(`broker ${url} did not answer within ${opts.timeoutMs} ms`);
    if (outcome !== 'connected') return fail(`broker ${url}: ${outcome}`);
    const sends = commands.map((command) =>
      client.publishAsync(command.topic, command.payload, { qos: 1, retain: false }).then(
        () => results.set(command.id, { sent: true }),
        (error: Error) => results.set(command.id, { sent: false, reason: error.message }),
      ),
    );
    await Promise.race([Promise.all(sends), deadline]);
    return fail(`no acknowledgement from ${url} within ${opts.timeoutMs} ms`);
  } finally {
    clearTimeout(timer);
    client.end(true);
  }
}

/** A client of its own for `safe`, one attempt, connecting now. */
function connectSafeClient(settings: NonNullable<ReturnType<typeof mqttSettings>>, timeoutMs: number) {
  // A client id of its own: the daemon's persistent session (and a restarted daemon) stay untouched.
  const client = mqtt.connect(settings.url, {
    clientId: `${settings.clientId}-safe`,
    protocolVersion: settings.protocolVersion,
    clean: true,
    reconnectPeriod: 0,
    // Our own deadline ends the wait (and says so); this one only backs it up.
    connectTimeout: timeoutMs + 1_000,
    queueQoSZero: false,
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(settings.ca ? { ca: settings.ca } : {}),
    ...(settings.cert ? { cert: settings.cert } : {}),
    ...(settings.key ? { key: settings.key } : {}),
  });
  // Errors are reported through the results; an 'error' without a listener would throw.
  client.on('error', () => {});
  return client;
}
