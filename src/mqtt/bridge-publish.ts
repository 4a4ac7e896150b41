import type { Logger } from 'pino';
import { type CommandOutcome, resultPayload } from '../control/commands.js';
import type { BridgeConnection } from './bridge-options.js';
import type { Topics } from './topics.js';

/** The bridge's way out: every publish of states, discovery and command results goes here. */
export class BridgePublisher {
  constructor(
    private readonly connection: BridgeConnection,
    private readonly logger: Logger,
    private readonly topics: Topics,
  ) {}

  /**
   * Resolves true once the broker has it (QoS 1) or it was written (QoS 0), false when dropped
   * (offline: the next connect redoes it).
   */
  publish(topic: string, payload: string, retain: boolean, qos: 0 | 1 = 1): Promise<boolean> {
    return this.connection.publish(topic, payload, { qos, retain }).then(
      () => true,
      (error) => {
        this.logger.debug({ err: error, topic }, 'MQTT publish dropped');
        return false;
      },
    );
  }

  /**
   * A command's result, not retained, at QoS 0: it is a reply, worth nothing after a reconnect
   * (the retained state says what is in force), and QoS 1 would keep every reply of a flood in
   * memory with a timer until the broker acknowledges it (measured: 45 MB more RSS at peak and
   * 40 % more CPU for 20,000 commands; test/bench/mqtt-flood.ts).
   */
  publishResult(loop: string, outcome: CommandOutcome, atIso: string, generation?: number): void {
    const payload = resultPayload({
      ...outcome,
      loop,
      atIso,
      ...(generation === undefined ? {} : { generation }),
    });
    this.publish(this.topics.loopResult(loop), payload, false, 0);
  }
}
