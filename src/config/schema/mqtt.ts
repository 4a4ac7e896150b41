import { z } from 'zod';

/** The broker connection (the daemon's one MQTT client). */
export const mqttSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .default('mqtt://127.0.0.1:1883')
      .describe('Broker URL: mqtt://host:port, or mqtts://host:port for TLS. Default mqtt://127.0.0.1:1883.'),
    baseTopic: z
      .string()
      .min(1)
      .default('homeostat')
      .describe('First topic level; topics are <baseTopic>/<node.id>/… Default homeostat.'),
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe('MQTT client id; keep it stable. Default: homeostat-<node.id>.'),
    username: z.string().optional().describe('Broker user name. Default: none (anonymous).'),
    passwordFile: z
      .string()
      .optional()
      .describe(
        'Path of a file holding the broker password (kept out of this file; the environment variable ' +
          'HOMEOSTAT_MQTT_PASSWORD works too). Never logged. Default: none.',
      ),
    protocolVersion: z
      .union([z.literal(5), z.literal(4)])
      .default(5)
      .describe('MQTT protocol: 5, or 4 for MQTT 3.1.1 brokers. Default 5.'),
    tls: z
      .strictObject({
        caFile: z
          .string()
          .optional()
          .describe('CA certificate (PEM) that signed the broker certificate. Default: the system CAs.'),
        certFile: z
          .string()
          .optional()
          .describe('Client certificate (PEM), for brokers that require one. Default: none.'),
        keyFile: z.string().optional().describe('Client private key (PEM), with certFile. Default: none.'),
      })
      .optional()
      .describe('TLS files for an mqtts:// broker. Default: the system CAs, no client certificate.'),
    heartbeatS: z
      .number()
      .gt(0)
      .default(60)
      .describe('An unchanged loop state is republished (retained) this often, seconds. Default 60.'),
    discovery: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Publish Home Assistant discovery. Default true.'),
        prefix: z
          .string()
          .min(1)
          .default('homeassistant')
          .describe('Discovery topic prefix. Default homeassistant.'),
      })
      .prefault({})
      .describe('Home Assistant MQTT discovery.'),
  })
  .describe(
    'MQTT broker connection (status, commands, Home Assistant, MQTT sensors and actuators). Default: ' +
      'none, no MQTT unless the command line gives a broker (--mqtt-url).',
  );

/** The mqtt block as parsed (clientId may be absent). */
export type RawMqtt = z.output<typeof mqttSchema>;
/** The mqtt block with every default resolved: `clientId` homeostat-<node.id> when not written. */
export type MqttConfig = Omit<RawMqtt, 'clientId'> & { clientId: string };

/** The mqtt block of a node, its client id filled in. */
export function resolveMqtt(raw: RawMqtt, nodeId: string): MqttConfig {
  return { ...raw, clientId: raw.clientId ?? `homeostat-${nodeId}` };
}
