/**
 * A node as `homeostat run` builds it, on the real clock and a real broker, for the tests that
 * play an MQTT device (a Zigbee2MQTT contact, a Shelly, an ESPHome node): started from config
 * text on a database in a temp dir, stopped and removed after the test, and a loop's status
 * and conditions to wait on.
 */
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { startTestNode } from '../support/node.js';
import { makeTempDir } from './helpers.js';
import { FAST_RECONNECT } from './mosquitto.js';

export async function startDeviceNode(t: TestContext, configText: string, tempPrefix: string) {
  const temp = makeTempDir(tempPrefix);
  const { node, daemon } = await startTestNode(configText, join(temp.dir, 'state.db'), {
    clock: new RealClock(),
    mqtt: { connection: FAST_RECONNECT },
  });
  t.after(async () => {
    await node.stop('test');
    temp.remove();
  });
  const loop = (id: string): LoopStatus | undefined => daemon.statuses().find((s) => s.loop === id);
  const condition = (id: string, type: string) => loop(id)?.conditions.find((c) => c.type === type);
  return { node, daemon, loop, condition };
}
