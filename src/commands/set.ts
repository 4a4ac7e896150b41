import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { type Config, mqttOf } from '../config/schema.js';
import { mqttSettings } from '../mqtt/setup.js';
import { type Topics, topicsFor } from '../mqtt/topics.js';
import { redactUrl } from '../redact.js';
import type { DaemonApi } from './api-client.js';
import { noDaemonNotice, reachForWrite } from './cli-config.js';

export interface SetOptions {
  configPath: string;
  loop: string;
  setpoint?: number;
  mode?: string;
  mqttUrl?: string;
  /** `--api-url`: the daemon's HTTP API, instead of the config's http block. */
  apiUrl?: string;
  /** How long to wait for the daemon's result over MQTT, ms. Default 10 000. */
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

type Write = (line: string) => void;

/**
 * `homeostat set LOOP --setpoint X | --mode M`: POSTs the change to the daemon's HTTP API, once
 * it has said it is the config's node, and prints its result. When no daemon answers there,
 * sends it through the broker as Home Assistant does and waits for the result, after checking
 * the loop against the config (an unknown loop fails at once, nothing sent). A POST that got no
 * answer in time may have been applied: it is not resent. Exit 0 accepted, 1 rejected, another
 * node or no answer, 2 no valid config without --api-url.
 * `note` (stderr) says which way the command went when it is not the API.
 */
export async function setCommand(opts: SetOptions, write: Write, note: Write = write): Promise<number> {
  const reached = await reachForWrite('set', opts, write, note);
  if (typeof reached === 'number') return reached;
  const command = {
    ...(opts.setpoint === undefined ? {} : { setpoint: opts.setpoint }),
    ...(opts.mode === undefined ? {} : { mode: opts.mode }),
    requestId: randomUUID().slice(0, 12),
  };
  let noHttp: string;
  if (reached.kind === 'api') {
    const done = await setOverHttp(reached.api, opts.loop, command, write);
    if (typeof done === 'number') return done;
    noHttp = done.noHttp;
  } else {
    noHttp = noDaemonNotice(reached);
  }
  const config = reached.cli.config;
  if (!config) {
    for (const line of reached.cli.errors) write(line);
    write(`homeostat set: ${noHttp}, and without a valid config the broker cannot be tried`);
    return 1;
  }
  const loops = Object.keys(config.loops);
  if (!loops.includes(opts.loop)) {
    write(
      `homeostat set: unknown loop "${opts.loop}": ${opts.configPath} has ${loops.join(', ') || 'no loops'}`,
    );
    return 1;
  }
  return setOverMqtt(opts, config, { command, noHttp }, { write, note });
}

/**
 * The POST: the exit code once answered (or once it may have arrived: a timed-out write may
 * have been applied, so it is not resent through the broker); else why nothing took it.
 */
async function setOverHttp(
  api: DaemonApi,
  loop: string,
  command: SetRequest['command'],
  write: Write,
): Promise<number | { noHttp: string }> {
  const answer = await api.set(loop, command);
  if (answer.kind === 'ok') return printResult(loop, answer.value, write);
  if (answer.kind === 'error') {
    write(`homeostat set: ${answer.message}`);
    return 1;
  }
  if (answer.cause === 'refused') return { noHttp: noDaemonNotice(answer) };
  write(
    `homeostat set: the daemon at ${answer.url}: ${answer.why}: the change may or may not have been applied; check with homeostat status`,
  );
  return 1;
}

function printResult(loop: string, result: SetResult, write: Write): number {
  if (result.accepted) {
    write(`${loop}: accepted (generation ${result.generation ?? '?'})`);
    return 0;
  }
  write(`${loop}: rejected: ${result.reason ?? 'no reason given'}`);
  return 1;
}

/** The fallback: the command through the broker, the result awaited on `<loop>/result`. */
async function setOverMqtt(
  opts: SetOptions,
  config: Config,
  sent: { command: SetRequest['command']; noHttp: string },
  out: { write: Write; note: Write },
): Promise<number> {
  const { write } = out;
  let settings: ReturnType<typeof mqttSettings>;
  try {
    settings = mqttSettings(config, opts.mqttUrl);
  } catch (error) {
    write(`homeostat set: ${sent.noHttp}, and ${(error as Error).message}`);
    return 1;
  }
  if (!settings) {
    write(
      `homeostat set: ${sent.noHttp}, and no broker is configured in ${opts.configPath} (add an mqtt block or --mqtt-url)`,
    );
    return 1;
  }
  const request: SetRequest = {
    topics: topicsFor(mqttOf(config).baseTopic, config.node.id),
    loop: opts.loop,
    command: sent.command,
    timeoutMs: opts.timeoutMs ?? 10_000,
    // Printed in messages: never with the password a URL may carry.
    safeUrl: redactUrl(settings.url),
  };
  out.note(`${sent.noHttp}; sending through the broker at ${request.safeUrl}`);
  const client = connectCliClient(settings, sent.command.requestId);
  try {
    return printResult(opts.loop, await sendAndAwaitResult(client, request), write);
  } catch (error) {
    write(`homeostat set: ${sent.noHttp}, and ${error instanceof Error ? error.message : String(error)}`);
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
        client.publish(topics.loopCommand(loop, 'json'), JSON.stringify(command), { qos: 1, retain: false });
      });
    });
  });
}
