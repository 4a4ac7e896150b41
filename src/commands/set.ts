import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { loadConfigFile } from '../config/load.js';
import { mqttOf } from '../config/schema.js';
import { type Topics, topicsFor } from '../mqtt/topics.js';
import { redactUrl } from '../redact.js';
import { mqttSettings } from './mqtt-setup.js';

export interface SetOptions {
  configPath: string;
  loop: string;
  setpoint?: number;
  mode?: string;
  mqttUrl?: string;
  /** How long to wait for the daemon's result, ms. Default 10 000. */
  timeoutMs?: number;
}

/** The daemon's answer on `<loop>/result`. */
interface SetResult {
  requestId?: string;
  accepted: boolean;
  reason?: string;
  generation?: number;
}

/** One command sent and the result awaited: where, what, and for how long. */
interface SetRequest {
  topics: Topics;
  loop: string;
  command: Record<string, unknown> & { requestId: string };
  timeoutMs: number;
  /** The broker URL as printed in messages. */
  safeUrl: string;
}

/**
 * `homeostat set LOOP --setpoint X | --mode M`: sends the change through the broker, like
 * Home Assistant does, and waits for the daemon's result (the daemon is the only writer of the
 * database). Exit 0 accepted, 1 rejected or no answer.
 */
export async function setCommand(opts: SetOptions, write: (line: string) => void): Promise<number> {
  const loaded = loadConfigFile(opts.configPath);
  if (!loaded.ok) {
    for (const line of loaded.errors) write(line);
    return 1;
  }
  const config = loaded.config;
  const settings = mqttSettings(config, opts.mqttUrl);
  if (!settings) {
    write(`homeostat set: no broker configured in ${opts.configPath} (add an mqtt block or --mqtt-url)`);
    return 1;
  }
  const topics = topicsFor(mqttOf(config).baseTopic, config.node.id);
  const requestId = randomUUID().slice(0, 12);
  const command = {
    ...(opts.setpoint === undefined ? {} : { setpoint: opts.setpoint }),
    ...(opts.mode === undefined ? {} : { mode: opts.mode }),
    requestId,
  };
  const client = connectCliClient(settings, requestId);
  const request: SetRequest = {
    topics,
    loop: opts.loop,
    command,
    timeoutMs: opts.timeoutMs ?? 10_000,
    // Printed in messages: never with the password a URL may carry.
    safeUrl: redactUrl(settings.url),
  };
  try {
    const result = await sendAndAwaitResult(client, request);
    if (result.accepted) {
      write(`${opts.loop}: accepted (generation ${result.generation ?? '?'})`);
      return 0;
    }
    write(`${opts.loop}: rejected: ${result.reason ?? 'no reason given'}`);
    return 1;
  } catch (error) {
    write(`homeostat set: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    client.end(true);
  }
}

/** A client of its own for this one command (its id carries the request id), one attempt. */
function connectCliClient(settings: NonNullable<ReturnType<typeof mqttSettings>>, requestId: string) {
  return mqtt.connect(settings.url, {
    clientId: `homeostat-cli-${requestId}`,
    protocolVersion: settings.protocolVersion,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 5_000,
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(settings.ca ? { ca: settings.ca } : {}),
    ...(settings.cert ? { cert: settings.cert } : {}),
    ...(settings.key ? { key: settings.key } : {}),
  });
}

/**
 * Once connected, subscribes to the loop's results, then publishes the command; resolves with
 * the result that carries our request id, rejects on a broker error or after `timeoutMs`.
 */
function sendAndAwaitResult(client: MqttClient, request: SetRequest): Promise<SetResult> {
  const { topics, loop, command, timeoutMs, safeUrl } = request;
  return new Promise<SetResult>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `no answer from homeostat within ${timeoutMs / 1000} s: is it running and connected to ${safeUrl}?`,
          ),
        ),
      timeoutMs,
    );
    client.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot reach the broker at ${safeUrl}: ${error.message}`));
    });
    client.on('message', (_topic, payload) => {
      try {
        const message = JSON.parse(payload.toString('utf8')) as SetResult;
        if (message.requestId !== command.requestId) return;
        clearTimeout(timer);
        resolve(message);
      } catch {
        // Not a result of ours.
      }
    });
    client.on('connect', () => {
      client.subscribe(topics.loopResult(loop), { qos: 1 }, (error) => {
        if (error) {
          clearTimeout(timer);
          reject(error);
          return;
        }
        client.publish(topics.loopSet(loop), JSON.stringify(command), { qos: 1, retain: false });
      });
    });
  });
}
