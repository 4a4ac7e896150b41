/**
 * MQTT sensors push their values: the daemon samples a new message at once (not at the next
 * period) and ages it from its arrival, so the loop reacts immediately and goes safe
 * staleAfterS after the last message. Fake transport, manual clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../src/config/load.js';
import { Daemon } from '../src/daemon/daemon.js';
import { buildDrivers } from '../src/kinds/build.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { FakeTransport } from './drivers/mqtt/fake-transport.js';
import { silentLogger } from './support/logger.js';
import { inMemoryStore } from './support/store.js';

const CONFIG = `
version: 1
node: { id: pi }
mqtt: {}
sensors:
  room_temp: { kind: mqtt, topic: tele/th1/SENSOR, field: AM2301.Temperature, periodS: 60 }
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  room: { sensor: room_temp, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;

async function start() {
  const loaded = parseConfigText(CONFIG);
  assert.ok(loaded.ok);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const transport = new FakeTransport();
  // The plug confirms every command at once.
  transport.subscribe('cmnd/plug/POWER', 1, () => {});
  const drivers = buildDrivers(loaded.config, () => clock.nowMs(), { mqtt: transport });
  const daemon = new Daemon({
    config: loaded.config,
    clock,
    logger: silentLogger,
    drivers,
    statusEveryMs: 0,
    ...inMemoryStore(clock, CONFIG),
  });
  await daemon.start();
  await clock.advance(1_000);
  const temperature = (value: number) =>
    transport.deliver('tele/th1/SENSOR', JSON.stringify({ AM2301: { Temperature: value } }));
  const commands = () =>
    transport.published.filter((p) => p.topic === 'cmnd/plug/POWER').map((p) => p.payload);
  return { daemon, clock, transport, temperature, commands };
}

describe('daemon with a push (MQTT) sensor', () => {
  test('given a message, the loop acts on it at once, not at the next sampling period', async () => {
    const { daemon, clock, temperature, commands } = await start();
    assert.deepEqual(commands(), ['OFF'], 'no reading yet: safe');
    temperature(15);
    await clock.advance(0);
    assert.deepEqual(commands(), ['OFF', 'ON']);
    await daemon.stop();
  });

  test('given the device goes quiet, the loop is safe staleAfterS (180 s) after the last message, not later', async () => {
    const { daemon, clock, temperature, commands } = await start();
    temperature(15);
    await clock.advance(0);
    await clock.advance(179_000);
    assert.equal(commands().at(-1), 'ON', 'still fresh');
    await clock.advance(2_000);
    assert.equal(commands().at(-1), 'OFF', 'stale: safe state');
    await daemon.stop();
  });
});
