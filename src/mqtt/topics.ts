/**
 * The one typed map of homeostat's MQTT topics (the contract documented in docs/home-assistant.md):
 *
 *   <base> = <baseTopic>/<nodeId>
 *   <base>/availability              retained online / offline (last will)
 *   <base>/instance                  retained JSON: which process runs this node (presence.ts)
 *   <base>/<loop>/state              retained JSON status
 *   <base>/<loop>/<command>          commands, one topic per kind: the operation table's `mqtt`
 *                                    (src/operations, listed in docs/home-assistant.md)
 *   <base>/<loop>/result             not retained, one reply per command
 *
 * Pure: no client, no IO. Ids become topic levels, so a `+`, `#` or `/` in one would turn a
 * topic into a wildcard or shift its levels; the config schema already forbids them, and
 * this module refuses them again rather than publish to the wrong place.
 */
import type { CommandKind } from '../control/commands.js';
import { MQTT_COMMANDS } from '../operations/table.js';

export interface CommandTopic {
  loop: string;
  kind: CommandKind;
}

export interface Topics {
  /** `<baseTopic>/<nodeId>`. */
  base: string;
  /** Retained `online` / `offline`; also the last will. */
  availability: string;
  /**
   * Retained JSON `{instance, pid, host, startedAt}` of the process running this node, so that
   * a second process with the same node id is noticed (mqtt/presence.ts). Kept apart from
   * `availability`, whose plain `online`/`offline` Home Assistant reads.
   */
  instance: string;
  loopState(loop: string): string;
  /** The topic of one of a loop's commands, as the operation table names it (`setpoint/set`). */
  loopCommand(loop: string, kind: CommandKind): string;
  loopResult(loop: string): string;
  /**
   * Subscription filters that match exactly the command topics of every loop (and
   * nothing we publish ourselves, so our own state and results never come back to us).
   */
  commandSubscription: readonly string[];
  /** Which loop and command a received topic is, or undefined when it is not a command topic. */
  parseCommandTopic(topic: string): CommandTopic | undefined;
}

/** A single topic level made from an id: no wildcards, no separators, not empty. */
const ID_LEVEL = /^[A-Za-z0-9_-]+$/;

/** Suffixes after `<base>/<loop>/`, one per command kind: the operation table's MQTT topics. */
const COMMAND_SUFFIXES: readonly (readonly [CommandKind, string])[] = MQTT_COMMANDS.map(
  ({ kind, suffix }) => [kind, suffix] as const,
);

/**
 * The topic map for one node. Throws on a base topic or node id that would make an unsafe
 * topic: `+`, `#`, NUL, an empty level (`a//b`, leading or trailing `/`), or a `/` in the id.
 */
export function topicsFor(baseTopic: string, nodeId: string): Topics {
  assertPlainTopic('base topic', baseTopic);
  checkId('node', nodeId);
  const base = `${baseTopic}/${nodeId}`;
  const loopTopic = (loop: string, suffix: string) => {
    checkId('loop', loop);
    return `${base}/${loop}/${suffix}`;
  };

  return {
    base,
    availability: `${base}/availability`,
    instance: `${base}/instance`,
    loopState: (loop) => loopTopic(loop, 'state'),
    loopCommand: (loop, kind) => loopTopic(loop, commandSuffix(kind)),
    loopResult: (loop) => loopTopic(loop, 'result'),
    commandSubscription: COMMAND_SUFFIXES.map(([, suffix]) => `${base}/+/${suffix}`),
    parseCommandTopic: (topic) => parseCommandTopic(base, topic),
  };
}

function commandSuffix(kind: CommandKind): string {
  const match = COMMAND_SUFFIXES.find(([k]) => k === kind);
  if (match === undefined) throw new Error(`no MQTT topic for command kind ${kind}`);
  return match[1];
}

function parseCommandTopic(base: string, topic: string): CommandTopic | undefined {
  if (!topic.startsWith(`${base}/`)) return undefined;
  const rest = topic.slice(base.length + 1);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  const loop = rest.slice(0, slash);
  if (!ID_LEVEL.test(loop)) return undefined;
  const suffix = rest.slice(slash + 1);
  const match = COMMAND_SUFFIXES.find(([, s]) => s === suffix);
  return match ? { loop, kind: match[0] } : undefined;
}

function checkId(what: string, id: string): void {
  if (!ID_LEVEL.test(id)) {
    throw new Error(
      `${what} id ${JSON.stringify(id)} cannot be an MQTT topic level: use letters, digits, _ and - only`,
    );
  }
}

/**
 * Throws unless `topic` is a plain topic prefix: not empty, no `+` or `#` (wildcards), no NUL,
 * no empty level (`a//b`, leading or trailing `/`), no leading `$` (reserved for the broker).
 * `what` names it in the message, e.g. "base topic".
 */
export function assertPlainTopic(what: string, topic: string): void {
  const bad =
    topic.length === 0 ||
    topic.includes('+') ||
    topic.includes('#') ||
    topic.includes('\0') ||
    topic.split('/').some((level) => level.length === 0) ||
    topic.startsWith('$');
  if (bad) {
    throw new Error(
      `${what} ${JSON.stringify(topic)} is not a plain topic: no +, #, empty levels or leading $`,
    );
  }
}
