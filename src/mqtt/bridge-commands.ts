import { DEFAULT_CHANGE_LIMIT } from '../control/change-limiter.js';
import type { DesiredCommands } from '../control/desired-commands.js';
import { DEFAULT_REJECTION_WINDOW_MS } from '../control/rejection-log.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import type { BridgePublisher } from './bridge-publish.js';

export { errorMessage } from '../control/command-rejections.js';

/** Rejected commands of one kind make one event per this window, ms (with a count). */
export const REJECTION_WINDOW_MS = DEFAULT_REJECTION_WINDOW_MS;
/** Changes a loop accepts at once (see ChangeLimiter). */
export const CHANGE_BURST = DEFAULT_CHANGE_LIMIT.burst;
/**
 * After clearing a retained command we ignore the empty message the broker forwards back to
 * us on that topic for this long, clock ms: it is our own clearing, not an empty `fault/reset`.
 */
const CLEAR_ECHO_MS = 30_000;

/** The result of a command that arrived with the retain flag. */
export const RETAINED_REASON =
  'retained command refused: send commands without the retain flag (a retained command is replayed at every restart); the retained message was cleared';

/** A received command waiting in the queue. */
export interface ReceivedCommand {
  topic: string;
  payload: Buffer;
  /** Delivered from the broker's retained store (a replay), not sent now. */
  retain: boolean;
  /** Clock time of receipt: a fault reset clears only faults latched before it. */
  receivedAtMs: number;
}

type CommandOptions = Pick<MqttBridgeOptions, 'topics' | 'clock'>;

interface CommandDeps {
  /** The command path shared with the other transports (validation, rate, store, events). */
  commands: DesiredCommands;
  output: BridgePublisher;
}

/**
 * The MQTT side of the command path: topics to commands, the retain flag, results on
 * `<loop>/result`. Validation, the change rate, storing (committed before the result is
 * published) and rejection events are DesiredCommands', shared with the HTTP API.
 */
export class CommandHandler {
  /** Command topics whose retained message we cleared → until when its empty echo is ignored. */
  private readonly clearedTopics = new Map<string, number>();

  constructor(
    private readonly opts: CommandOptions,
    private readonly deps: CommandDeps,
  ) {}

  /**
   * One command. Refused here: commands of a known loop that arrive with the retain flag (a
   * replay from the broker's retained store, not something someone sends now), which are also
   * cleared from the broker. Everything else is DesiredCommands.submit's to decide.
   */
  handle({ topic, payload, retain, receivedAtMs }: ReceivedCommand): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    const { loop, kind } = command;
    const nowMs = this.opts.clock.nowMs();
    if (payload.byteLength === 0 && this.isOwnClearing(topic, nowMs)) return;
    const { commands, output } = this.deps;
    const request = { loop, kind, payload, source: 'mqtt' as const, receivedAtMs };
    // An unknown loop is refused as unknown (by submit), retained or not: nothing to clear.
    let answer: ReturnType<DesiredCommands['submit']>;
    if (retain && commands.knows(loop)) {
      this.clearRetained(topic, nowMs);
      answer = commands.refuse(request, RETAINED_REASON);
    } else {
      answer = commands.submit(request);
    }
    output.publishResult(loop, answer.outcome, new Date(nowMs).toISOString(), answer.generation);
  }

  /**
   * Deletes a retained command from the broker (an empty retained publish), so it is not
   * replayed at the next (re)subscribe. The broker forwards that empty message to us too.
   */
  private clearRetained(topic: string, nowMs: number): void {
    this.clearedTopics.set(topic, nowMs + CLEAR_ECHO_MS);
    void this.deps.output.publish(topic, '', true);
  }

  /** Whether an empty message on `topic` is the echo of our own clearing (consumed once). */
  private isOwnClearing(topic: string, nowMs: number): boolean {
    const untilMs = this.clearedTopics.get(topic);
    if (untilMs === undefined) return false;
    this.clearedTopics.delete(topic);
    return nowMs <= untilMs;
  }
}
