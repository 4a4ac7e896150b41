/**
 * An alert as it is told: what every channel sends (ntfy's title and message, Telegram's text,
 * the webhook's and MQTT's JSON), built from a tracker transition (rules.ts). Pure.
 */
import { formatElapsed } from '../core/time.js';
import type { AlertKind, AlertTransition, Streak, StreakKind } from './rules.js';

export type AlertPhase = 'raised' | 'resolved' | 'event' | 'test';
export type AlertSeverity = 'critical' | 'warning' | 'info';

export interface AlertNotice {
  /** Unique per message, the same on every retry: a channel that can de-duplicate uses it. */
  id: string;
  node: string;
  /** Absent for the node's own (the database, a test). */
  loop?: string;
  kind: AlertKind | 'test';
  phase: AlertPhase;
  severity: AlertSeverity;
  /** One line: `Fermenter: sensor fault`. */
  title: string;
  /** What is wrong and what homeostat does about it; for a resolved one, how long it lasted. */
  message: string;
  /** When it was told, wall ms since the epoch. */
  atMs: number;
  /** A raised alert's and its resolution's common id (`<node>/<key>/<started>`). */
  streakId?: string;
  /** Alerts the hourly cap held back on this channel since the last one it told. */
  suppressed?: number;
}

const WHAT: Record<StreakKind, string> = {
  latched: 'fault latched, actuators safe until reset',
  faulted: 'sensor fault, actuators safe',
  unconfirmed: 'actuator not confirmed',
  interlock: 'paused by an interlock',
  storage: 'database unusable',
  band: 'outside the alert band',
  peer: 'node offline',
};

const SEVERITY: Record<StreakKind, AlertSeverity> = {
  latched: 'critical',
  faulted: 'critical',
  band: 'critical',
  unconfirmed: 'warning',
  interlock: 'warning',
  storage: 'warning',
  peer: 'critical',
};

export interface NoticeContext {
  node: string;
  /** The node's and each loop's name for people. */
  nodeName: string;
  loopName: (loop: string) => string;
  /** Wall time now, ms. */
  wallMs: number;
  /**
   * The wall time a streak started, ms: taken once when it started, so its alert and its
   * resolution carry the same streakId (converting its monotonic start again later could differ
   * by a rounding millisecond).
   */
  startedAtMsOf: (streak: Streak) => number;
}

/** The notice of a transition worth telling (raised, resolved, an event); else undefined. */
export function noticeOf(transition: AlertTransition, context: NoticeContext): AlertNotice | undefined {
  const { node, wallMs } = context;
  if (transition.phase === 'event') {
    const name = context.loopName(transition.loop);
    const what =
      transition.kind === 'profile'
        ? `profile "${transition.name ?? ''}" finished`
        : `autotune ${transition.outcome === 'done' ? 'finished' : 'aborted'}`;
    return {
      id: `${node}/${transition.loop}/${transition.kind}/${wallMs}`,
      node,
      loop: transition.loop,
      kind: transition.kind,
      phase: 'event',
      severity: 'info',
      title: `${name}: ${what}`,
      message: transition.message,
      atMs: wallMs,
    };
  }
  if (transition.phase !== 'raised' && transition.phase !== 'resolved') return undefined;
  const { streak } = transition;
  const who =
    streak.kind === 'peer'
      ? streak.key.slice('peer/'.length)
      : streak.loop === undefined
        ? context.nodeName
        : context.loopName(streak.loop);
  const startedAtMs = context.startedAtMsOf(streak);
  const resolved = transition.phase === 'resolved';
  const streakId = `${node}/${streak.key}/${startedAtMs}`;
  return {
    id: `${streakId}/${transition.phase}`,
    streakId,
    node,
    ...(streak.loop === undefined ? {} : { loop: streak.loop }),
    kind: streak.kind,
    phase: transition.phase,
    severity: resolved ? 'info' : SEVERITY[streak.kind],
    title: `${who}: ${resolved ? 'resolved: ' : ''}${WHAT[streak.kind]}`,
    message: resolved
      ? `after ${formatElapsed(transition.lastedMs)} (was: ${streak.message})`
      : streak.message,
    atMs: wallMs,
  };
}

/** A test notice (`homeostat alert test`): goes through the same outbox as any alert. */
export function testNotice(node: string, nodeName: string, wallMs: number): AlertNotice {
  return {
    id: `${node}/test/${wallMs}`,
    node,
    kind: 'test',
    phase: 'test',
    severity: 'info',
    title: `${nodeName}: test alert`,
    message: 'If you read this, alerts from homeostat reach you here.',
    atMs: wallMs,
  };
}

/** The notice's body: the message, and the cap's count when it held some back. */
export function noticeBody(notice: AlertNotice): string {
  const held = notice.suppressed ? `\n(${notice.suppressed} more held back by the hourly cap)` : '';
  return `${notice.message}${held}`;
}

/** The notice in one block (Telegram): the title, then the body. */
export function noticeText(notice: AlertNotice): string {
  return `${notice.title}\n${noticeBody(notice)}`;
}
