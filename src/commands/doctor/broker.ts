/** Doctor check 4: the MQTT broker. */
import mqtt from 'mqtt';
import type { Config } from '../../config/schema.js';
import type { CheckResult } from '../../kinds/types.js';
import { mqttSettings } from '../../mqtt/setup.js';
import { redactUrl } from '../../redact.js';
import { failedCheck, messageOf } from './shared.js';

/** How long the broker check waits for a CONNACK, ms. */
export const BROKER_TIMEOUT_MS = 5_000;

/**
 * Connects once to the configured broker with its credentials, as a separate client (the
 * daemon's client id + `-doctor`: reusing the daemon's id would take over its session).
 * Skipped without an mqtt block. The password is never printed, nor a password in the URL.
 */
export async function checkBroker(
  config: Config,
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CheckResult> {
  const name = 'MQTT broker';
  if (!config.mqtt) return { name, status: 'skip', detail: 'no mqtt block in this config' };
  let settings: ReturnType<typeof mqttSettings>;
  try {
    settings = mqttSettings(config, undefined, opts.env ?? process.env);
  } catch (error) {
    return failedCheck(
      name,
      error,
      'make the file readable by the user running homeostat, or correct its path in the mqtt block',
    );
  }
  if (!settings) return { name, status: 'skip', detail: 'no broker URL configured' };
  const url = redactUrl(settings.url);
  const who = settings.username ? ` as ${settings.username}` : ' anonymously';
  const timeoutMs = opts.timeoutMs ?? BROKER_TIMEOUT_MS;
  const error = await tryConnect(settings, timeoutMs);
  if (!error) return { name, status: 'ok', detail: `connected to ${url}${who}` };
  return {
    name,
    status: 'fail',
    detail: `${url}${who}: ${messageOf(error)}`,
    fix: brokerFix(error, timeoutMs),
  };
}

/** The fix for a failed broker connection, from the error MQTT.js reported. */
export function brokerFix(error: unknown, timeoutMs: number = BROKER_TIMEOUT_MS): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = messageOf(error);
  if (code === 'ECONNREFUSED') {
    return 'nothing listens there: is mosquitto running (systemctl status mosquitto), and are host and port in mqtt.url right?';
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return 'the host name in mqtt.url does not resolve: correct it';
  if (/Not authorized|Bad user ?name or password/i.test(message)) {
    return "the broker refused the credentials: check mqtt.username and the password in mqtt.passwordFile (or HOMEOSTAT_MQTT_PASSWORD), and the broker's ACL";
  }
  if (
    (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO|TLS|SSL/.test(code)) ||
    /certificate|TLS|SSL/i.test(message)
  ) {
    return 'the TLS handshake failed: set mqtt.tls.caFile to the CA that signed the broker certificate, and use the host name the certificate names';
  }
  if (/timed out|timeout/i.test(message)) {
    return `no answer within ${timeoutMs / 1000} s: check mqtt.url (mqtt:// vs mqtts://, port) and firewalls`;
  }
  return 'check mqtt.url and the broker log (journalctl -u mosquitto)';
}

/** Resolves undefined once connected, or the error (timeout included); always closes the client. */
function tryConnect(settings: NonNullable<ReturnType<typeof mqttSettings>>, timeoutMs: number) {
  return new Promise<Error | undefined>((resolve) => {
    const client = mqtt.connect(settings.url, {
      clientId: `${settings.clientId}-doctor`,
      protocolVersion: settings.protocolVersion,
      clean: true,
      connectTimeout: timeoutMs,
      // One attempt: the verdict is about this attempt, not eventual success.
      reconnectPeriod: 0,
      ...(settings.username === undefined ? {} : { username: settings.username }),
      ...(settings.password === undefined ? {} : { password: settings.password }),
      ...(settings.ca === undefined ? {} : { ca: settings.ca }),
      ...(settings.cert === undefined ? {} : { cert: settings.cert }),
      ...(settings.key === undefined ? {} : { key: settings.key }),
    });
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end(true);
      resolve(error);
    };
    const timer = setTimeout(
      () => settle(new Error(`timed out after ${timeoutMs / 1000} s without a CONNACK`)),
      timeoutMs,
    );
    client.on('connect', () => settle(undefined));
    client.on('error', (error) => settle(error));
    client.on('close', () => settle(new Error('connection closed before the broker accepted it')));
  });
}
