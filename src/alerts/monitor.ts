/**
 * Alerts at run time: every loop status goes through the tracker (rules.ts) on the monotonic
 * clock; what it raises or resolves goes, through the hourly cap, into the outbox of each
 * channel the loop alerts on (and MQTT's), and the dispatcher delivers it. A timer raises a
 * streak whose delay ends between two statuses. Faults are logged here too, at warning when
 * they start and at info when they clear, once per streak, whatever the alert rules.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { formatElapsed } from '../core/time.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { StampClock } from '../time/stamps.js';
import { HourlyCap } from './cap.js';
import type { AlertDispatcher } from './dispatcher.js';
import type { LoopStatusWithSchedule } from './events.js';
import { type AlertNotice, noticeOf } from './notice.js';
import type { AlertOutbox } from './outbox.js';
import {
  type AlertTrackerState,
  type AlertTransition,
  EMPTY_ALERT_STATE,
  forgetLoops,
  nextDueMs,
  raiseDue,
  type Streak,
  trackLoopStatus,
  trackPeer,
} from './rules.js';
import { rulesOf } from './rules-of.js';

export interface AlertMonitorOptions {
  config: Config;
  clock: Pick<Clock, 'nowMs' | 'monotonicMs' | 'setTimer' | 'clearTimer'>;
  logger: Logger;
  outbox: AlertOutbox;
  dispatcher: AlertDispatcher;
  /** The channels alerts go to, by id; `mqtt` (when there is a broker) gets every alert. */
  channels: readonly string[];
}

/** The message of a loop's first cycles, before its sensor's first reading (core/sensor-health.ts). */
const NO_READING_YET = 'no reading yet';
/** How long "no reading yet" may last before it is logged as a fault. */
const NO_READING_GRACE_MS = 30_000;

/** The channel that always gets every alert, when the node has a broker. */
export const MQTT_CHANNEL = 'mqtt';

export class AlertMonitor {
  #config: Config;
  #state: AlertTrackerState = EMPTY_ALERT_STATE;
  #timer: TimerHandle | undefined;
  /** Each streak's wall-clock start (its alerts' streakId), taken when it started. */
  readonly #startedAtMs = new Map<string, number>();
  /** Faults waiting to be logged: a loop's first cycles before its first reading (see #log). */
  readonly #unlogged = new Map<string, number>();
  readonly #cap: HourlyCap;
  readonly #stamps: StampClock;

  constructor(private readonly opts: AlertMonitorOptions) {
    this.#config = opts.config;
    this.#cap = new HourlyCap(opts.config.alerts.capPerHour);
    this.#stamps = new StampClock(
      () => opts.clock.nowMs(),
      () => opts.clock.monotonicMs(),
    );
  }

  /** A loop's status after a cycle. */
  onStatus(status: LoopStatusWithSchedule): void {
    const rules = rulesOf(this.#config, status.loop);
    if (!rules) return;
    const tracked = trackLoopStatus(this.#state, status, rules, this.opts.clock.monotonicMs());
    this.#state = tracked.state;
    this.#handle(tracked.transitions);
    this.#logLateFaults();
  }

  /**
   * A watched node's availability: `problem` while it is offline or not yet seen (why, for a
   * person), undefined once it is online.
   */
  onPeer(peer: string, problem: string | undefined): void {
    const delayMs = rulesOf(this.#config, undefined)?.delaysMs.peer;
    const tracked = trackPeer(this.#state, peer, problem, delayMs, this.opts.clock.monotonicMs());
    this.#state = tracked.state;
    this.#handle(tracked.transitions);
  }

  /** A reloaded config: its rules and channels from now on; removed loops' streaks end. */
  applyConfig(config: Config): void {
    this.#config = config;
    const forgotten = forgetLoops(this.#state, (loop) => loop in config.loops, this.opts.clock.monotonicMs());
    this.#state = forgotten.state;
    this.#handle(forgotten.transitions);
    // New delays move the due times of the streaks that wait.
    this.#schedule();
  }

  stop(): void {
    if (this.#timer) this.opts.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #handle(transitions: AlertTransition[]): void {
    for (const transition of transitions) {
      this.#log(transition);
      if (transition.phase === 'started')
        this.#startedAtMs.set(transition.streak.key, this.opts.clock.nowMs());
      const notice = noticeOf(transition, this.#noticeContext());
      if (notice) this.#enqueue(notice);
      if (transition.phase === 'resolved' || transition.phase === 'ended')
        this.#startedAtMs.delete(transition.streak.key);
    }
    // Only a streak that started, was raised or ended moves the next due time.
    if (transitions.length > 0) this.#schedule();
  }

  #noticeContext() {
    const config = this.#config;
    return {
      node: config.node.id,
      nodeName: config.node.name,
      loopName: (loop: string) => config.loops[loop]?.name ?? loop,
      wallMs: this.opts.clock.nowMs(),
      startedAtMsOf: (streak: Streak) =>
        this.#startedAtMs.get(streak.key) ?? this.#stamps.wallOf(streak.sinceMs),
    };
  }

  #enqueue(notice: AlertNotice): void {
    const loopChannels =
      notice.loop === undefined ? undefined : this.#config.loops[notice.loop]?.alerts?.channels;
    const targets = this.opts.channels.filter(
      (channel) => channel === MQTT_CHANNEL || loopChannels === undefined || loopChannels.includes(channel),
    );
    const nowMs = this.opts.clock.monotonicMs();
    const sentTo: string[] = [];
    for (const channel of targets) {
      // MQTT is not capped: automations want every message, and it costs no one's phone.
      const admitted = channel === MQTT_CHANNEL ? notice : this.#cap.admit(channel, notice, nowMs);
      if (!admitted) continue;
      this.opts.outbox.add(channel, admitted, this.opts.clock.nowMs());
      sentTo.push(channel);
    }
    if (notice.phase !== 'resolved' || sentTo.length > 0) {
      this.opts.logger.info(
        `alert ${notice.phase}: ${notice.title}: ${notice.message}${sentTo.length ? ` (to ${sentTo.join(', ')})` : ' (no channel)'}`,
      );
    }
    this.opts.dispatcher.kick();
  }

  /**
   * Faults, once per streak: warning when one starts, info when it clears. "No reading yet" is
   * logged only once it lasted NO_READING_GRACE_MS: every start shows it for a cycle or two.
   */
  #log(transition: AlertTransition): void {
    if (transition.phase === 'event') return;
    const { streak } = transition;
    if (transition.phase === 'raised') {
      // Raised within the grace (a short faultedForS): the journal hears of it now.
      if (this.#unlogged.delete(streak.key)) this.#warnFault(streak);
      return;
    }
    if (streak.kind !== 'faulted' && streak.kind !== 'latched') return;
    const loop = streak.loop ?? this.#config.node.id;
    if (transition.phase === 'started') {
      if (streak.message.endsWith(NO_READING_YET)) this.#unlogged.set(streak.key, streak.sinceMs);
      else this.#warnFault(streak);
      return;
    }
    if (this.#unlogged.delete(streak.key)) return;
    const lastedMs = this.opts.clock.monotonicMs() - streak.sinceMs;
    this.opts.logger.info({ loop }, `${loop}: fault cleared after ${formatElapsed(lastedMs)}`);
  }

  /** Faults held back by #log that lasted their grace: logged now. */
  #logLateFaults(): void {
    const nowMs = this.opts.clock.monotonicMs();
    for (const [key, sinceMs] of this.#unlogged) {
      const streak = this.#state.streaks.get(key);
      if (!streak) {
        this.#unlogged.delete(key);
        continue;
      }
      if (nowMs - sinceMs < NO_READING_GRACE_MS) continue;
      this.#unlogged.delete(key);
      this.#warnFault(streak);
    }
  }

  #warnFault(streak: Streak): void {
    const loop = streak.loop ?? this.#config.node.id;
    this.opts.logger.warn({ loop }, `${loop}: fault: ${streak.message}`);
  }

  /** A timer for the next streak due to be raised between statuses. */
  #schedule(): void {
    if (this.#timer) this.opts.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    const rules = (loop: string | undefined) => rulesOf(this.#config, loop);
    const dueMs = nextDueMs(this.#state, rules);
    if (dueMs === undefined) return;
    const delayMs = Math.max(0, Math.ceil(dueMs - this.opts.clock.monotonicMs()));
    this.#timer = this.opts.clock.setTimer(() => {
      this.#timer = undefined;
      const due = raiseDue(this.#state, rules, this.opts.clock.monotonicMs());
      this.#state = due.state;
      this.#handle(due.transitions);
      // A timer may fire a fraction of a ms early (nothing was due yet): it is set again.
      if (!this.#timer) this.#schedule();
    }, delayMs);
  }
}
