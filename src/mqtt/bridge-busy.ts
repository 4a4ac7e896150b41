import type { RejectedCommandLog } from '../control/rejection-log.js';
import type { TimerHandle } from '../time/clock.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import type { BridgePublisher } from './bridge-publish.js';
import { DEFAULT_MAX_QUEUED_COMMANDS } from './command-queue.js';

/** Commands dropped by a full queue are answered by one rejection per loop per this, ms. */
export const BUSY_REPORT_MS = 1_000;

type BusyOptions = Pick<MqttBridgeOptions, 'topics' | 'control' | 'clock' | 'maxQueuedCommands'>;

/**
 * The queue is full (a flood): the command is dropped unread, counted per loop, and answered
 * by one coalesced rejection per loop per BUSY_REPORT_MS carrying the count. Counting costs
 * next to nothing, so the receive path stays short whatever arrives; answering each dropped
 * command would cost a publish each, on the receive path, in the middle of the flood.
 */
export class BusyReporter {
  /** Commands dropped unread because the queue was full, by loop ('' for unknown loops). */
  private readonly busyCounts = new Map<string, number>();
  private busyTimer: TimerHandle | undefined;

  constructor(
    private readonly opts: BusyOptions,
    private readonly rejections: RejectedCommandLog,
    private readonly output: BridgePublisher,
  ) {}

  /** One command dropped unread on `topic`. */
  dropped(topic: string): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    // Unknown loop ids share one counter (reported as an event only): the map stays bounded.
    const key = Object.hasOwn(this.opts.control.currentConfig().loops, command.loop) ? command.loop : '';
    this.busyCounts.set(key, (this.busyCounts.get(key) ?? 0) + 1);
    this.busyTimer ??= this.opts.clock.setTimer(() => this.report(), BUSY_REPORT_MS);
  }

  stop(): void {
    if (this.busyTimer) this.opts.clock.clearTimer(this.busyTimer);
    this.busyTimer = undefined;
  }

  private report(): void {
    this.busyTimer = undefined;
    const maxQueued = this.opts.maxQueuedCommands ?? DEFAULT_MAX_QUEUED_COMMANDS;
    const atIso = new Date(this.opts.clock.nowMs()).toISOString();
    for (const [loop, count] of this.busyCounts) {
      const reason = `busy: ${count} command${count === 1 ? '' : 's'} dropped unread (more than ${maxQueued} were waiting); send again later`;
      this.rejections.note({ ...(loop ? { loop } : {}), source: 'mqtt', message: reason });
      if (loop) this.output.publishResult(loop, { accepted: false, reason }, atIso);
    }
    this.busyCounts.clear();
  }
}
