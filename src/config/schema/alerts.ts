/**
 * Alerts: where they go (channels) and what raises them (rules, with defaults every loop can
 * override). Secrets are named by file, never written here.
 */
import { z } from 'zod';
import { alertChannelSchema } from './alert-channels.js';
import { idKey, NODE_ID_PATTERN } from './common.js';

export type { AlertChannelConfig } from './alert-channels.js';

/** A delay in seconds, or false: this alert is never raised. */
const delayS = z.union([z.number().min(0), z.literal(false)]);

export const ALERT_RULE_DEFAULTS = {
  latchedForS: 0,
  faultedForS: 60,
  unconfirmedForS: 120,
  interlockForS: 1800,
  storageForS: 60,
} as const;

type RuleKey = keyof typeof ALERT_RULE_DEFAULTS;

const RULE_TEXT: Record<RuleKey, string> = {
  latchedForS:
    'A latched fault (effect watch, cut-off, stuck, runaway, maximum on-time) raises an alert after this long',
  faultedForS:
    'A sensor fault (reading missing, stale, not a number, implausible, its device offline) raises an alert once it lasted this long',
  unconfirmedForS:
    'An actuator whose state is not confirmed (a write failing, a plug not answering) raises an alert after this long',
  interlockForS: 'An interlock (a window or door open) that pauses the loop raises an alert after this long',
  storageForS: 'The database unusable (corrupt, full, locked, unwritable) raises an alert after this long',
};

/** The node-wide rule: its default in force. */
const rule = (key: RuleKey) =>
  delayS
    .default(ALERT_RULE_DEFAULTS[key])
    .describe(`${RULE_TEXT[key]}, seconds; false: never. Default ${ALERT_RULE_DEFAULTS[key]}.`);

/** A loop's override of it. */
const ruleOverride = (key: RuleKey) =>
  delayS.optional().describe(`${RULE_TEXT[key]}, seconds; false: never. Default: alerts.rules.${key}.`);

const bandSchema = z
  .strictObject({
    low: z
      .number()
      .optional()
      .describe('Lowest value (loop unit) before the alert counts. Default: no lower bound.'),
    high: z
      .number()
      .optional()
      .describe('Highest value (loop unit) before the alert counts. Default: no upper bound.'),
    forS: z
      .number()
      .min(0)
      .default(600)
      .describe('How long the value must stay outside, seconds. Default 600.'),
  })
  .refine((band) => band.low !== undefined || band.high !== undefined, 'give low, high or both')
  .refine(
    (band) => band.low === undefined || band.high === undefined || band.low < band.high,
    'low must be below high',
  )
  .describe(
    'Alert when the measured value stays outside low..high, fault or not (a fermenter above 22 °C). Default: none.',
  );

/** A loop's `alerts`: the node's rules with its own overrides, a band, and which channels. */
export const loopAlertsSchema = z
  .strictObject({
    latchedForS: ruleOverride('latchedForS'),
    faultedForS: ruleOverride('faultedForS'),
    unconfirmedForS: ruleOverride('unconfirmedForS'),
    interlockForS: ruleOverride('interlockForS'),
    band: bandSchema.optional(),
    autotune: z
      .boolean()
      .optional()
      .describe(
        "An autotune that finished or was aborted is told. Default: the node's alerts.rules.autotune.",
      ),
    profile: z
      .boolean()
      .optional()
      .describe(
        "A profile that finished (all its steps done) is told. Default: the node's alerts.rules.profile.",
      ),
    channels: z
      .array(z.string())
      .optional()
      .describe('Ids of the alerts.channels this loop alerts on. Default: every channel.'),
  })
  .describe(
    "This loop's alerts: overrides of alerts.rules, an alert band, the channels. Default: alerts.rules.",
  );

export type LoopAlertsConfig = z.output<typeof loopAlertsSchema>;

export const alertsSchema = z
  .strictObject({
    channels: z
      .record(idKey('channel'), alertChannelSchema)
      .default({})
      .describe(
        'Where alerts go, by id. Every alert also goes to MQTT <baseTopic>/<node.id>/alerts (not retained) when a broker is set. Default none.',
      ),
    rules: z
      .strictObject({
        latchedForS: rule('latchedForS'),
        faultedForS: rule('faultedForS'),
        unconfirmedForS: rule('unconfirmedForS'),
        interlockForS: rule('interlockForS'),
        storageForS: rule('storageForS'),
        autotune: z
          .boolean()
          .default(true)
          .describe('An autotune that finished or was aborted is told. Default true.'),
        profile: z
          .boolean()
          .default(true)
          .describe('A profile that finished (all its steps done) is told. Default true.'),
      })
      .prefault({})
      .describe('What raises an alert on every loop (a loop overrides them in loops.<id>.alerts).'),
    peers: z
      .strictObject({
        nodes: z
          .array(
            z.string().regex(NODE_ID_PATTERN, { error: 'a node id: lowercase letters, digits, _ and -' }),
          )
          .min(1)
          .describe('The node.id of each homeostat to watch, on the same broker and baseTopic. Required.'),
        offlineForS: z
          .number()
          .min(0)
          .default(120)
          .describe(
            'A watched node offline this long (its last will said so: it died, lost power or its network), or ' +
              'never seen online since this node started, raises an alert, seconds. Default 120.',
          ),
      })
      .optional()
      .describe(
        'Other nodes this one watches through their MQTT availability (<baseTopic>/<node>/availability): the one failure a node cannot tell itself, its own death or power loss, is told by another. Needs an mqtt block. Default: none.',
      ),
    capPerHour: z
      .number()
      .int()
      .min(1)
      .default(10)
      .describe(
        'At most this many alerts per channel in an hour (a resolved one is not counted); the rest are counted ' +
          'and the count is told with the next one, so a flapping sensor cannot flood a phone. Default 10.',
      ),
    outboxLimit: z
      .number()
      .int()
      .min(10)
      .default(1000)
      .describe(
        'Undelivered alerts kept (in the database, across restarts) while a channel is down; beyond it the oldest ' +
          'are dropped and counted. Default 1000.',
      ),
  })
  .describe(
    'Alerts when a loop goes safe, a sensor goes quiet, a window stays open: told once when it starts and once ' +
      'when it is resolved, through an outbox in the database (retried while the network is down).',
  );

export type AlertsConfig = z.output<typeof alertsSchema>;

/** Loops naming channels that do not exist; a node watching itself. */
export function checkAlertChannels(
  config: {
    node: { id: string };
    alerts: AlertsConfig;
    loops: Record<string, { alerts?: { channels?: string[] | undefined } | undefined }>;
  },
  ctx: z.RefinementCtx,
): void {
  for (const [index, peer] of (config.alerts.peers?.nodes ?? []).entries()) {
    if (peer !== config.node.id) continue;
    ctx.addIssue({
      code: 'custom',
      path: ['alerts', 'peers', 'nodes', index],
      message: `"${peer}" is this node: a node cannot tell its own death; name the other nodes`,
    });
  }
  const known = Object.keys(config.alerts.channels);
  for (const [loop, section] of Object.entries(config.loops)) {
    for (const [index, channel] of (section.alerts?.channels ?? []).entries()) {
      if (known.includes(channel)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['loops', loop, 'alerts', 'channels', index],
        message: `unknown alert channel "${channel}"${known.length ? ` (channels: ${known.join(', ')})` : ': alerts.channels has none'}`,
      });
    }
  }
}
