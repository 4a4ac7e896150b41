/**
 * docs/how-a-loop-works.md promises that a NaN or infinite reading sends the loop safe "at once". These run
 * the daemon on a manual clock with a heater running, make the sensor report a non-finite value
 * and check that the heater is off without the clock moving: in the cycle the value arrives,
 * not when the last good reading goes stale (up to staleAfterS, 180 s for MQTT sensors).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Config } from '../src/config/schema.js';
import type { Daemon } from '../src/daemon/daemon.js';
import { GpioInput } from '../src/drivers/gpio/input.js';
import type { PinLevel } from '../src/drivers/gpio/port.js';
import type { SimSensor } from '../src/drivers/sim/sensor.js';
import { buildDrivers, type Drivers } from '../src/kinds/build.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { fakeFactory, pi4Sysfs } from './drivers/gpio/fakes.js';
import { FakeTransport } from './drivers/mqtt/fake-transport.js';
import { validConfig } from './support/config.js';
import { memoryDaemon } from './support/store.js';

const START_MS = Date.UTC(2026, 0, 1);

/** A cold room (ambient 10 °C, setpoint 20 °C): the heater runs flat out. */
function configText(sensor: string, extra = ''): string {
  return `
version: 1
node: { id: test }
mqtt: { url: "mqtt://127.0.0.1:1" }
simulation:
  plants:
    room: { kind: thermal, ambient: 10, timeConstantS: 3600 }
sensors:
  t: ${sensor}
${extra}
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20, windowS: 300, minOnS: 120, minOffS: 60 }
loops:
  room:
    sensor: t
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis, coldTolerance: 0.3, hotTolerance: 0.3 }
`;
}

async function heaterLevel(drivers: Drivers): Promise<number | undefined> {
  return drivers.actuators.get('heater')!.observe();
}

async function start(config: Config, drivers: Drivers, clock: ManualClock) {
  const daemon = memoryDaemon(config, drivers, clock);
  await daemon.start();
  await clock.advance(60_000);
  assert.equal(await heaterLevel(drivers), 1, 'given a cold room, the heater runs');
  return daemon;
}

function sensorHealth(daemon: Daemon) {
  return daemon.statuses()[0]!.conditions.find((c) => c.type === 'SensorHealthy');
}

describe('a non-finite reading sends the loop safe at once', () => {
  test('simulated sensor: given a running heater, when the sensor reads NaN at its next period, then the heater is off in that cycle', async () => {
    const clock = new ManualClock(START_MS);
    const config = validConfig(configText('{ kind: simulated, plant: room, periodS: 10 }'));
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = await start(config, drivers, clock);
    (drivers.sensors.get('t') as SimSensor).injectFault({ kind: 'nan' });
    await clock.advance(10_000); // the next read: NaN
    assert.equal(await heaterLevel(drivers), 0);
    assert.equal(sensorHealth(daemon)?.reason, 'NotFinite');
    await daemon.stop();
  });

  const mqttCases: Array<[name: string, sensor: string, good: string, bad: string]> = [
    ['MQTT plain payload "nan"', '{ kind: mqtt, topic: th/t, periodS: 60 }', '12.5', 'nan'],
    ['MQTT plain payload "inf"', '{ kind: mqtt, topic: th/t, periodS: 60 }', '12.5', 'inf'],
    [
      'MQTT JSON field null (Tasmota with the probe unplugged)',
      '{ kind: mqtt, topic: th/t, field: AM2301.Temperature, periodS: 60 }',
      '{"AM2301":{"Temperature":12.5}}',
      '{"AM2301":{"Temperature":null}}',
    ],
    [
      'MQTT JSON field "nan" (ESPHome)',
      '{ kind: mqtt, topic: th/t, field: temperature, periodS: 60 }',
      '{"temperature":12.5}',
      '{"temperature":"nan"}',
    ],
  ];
  for (const [name, sensor, good, bad] of mqttCases) {
    test(`${name}: given a running heater, when the message arrives, then the heater is off before the clock moves`, async () => {
      const clock = new ManualClock(START_MS);
      const transport = new FakeTransport();
      const config = validConfig(configText(sensor));
      const drivers = buildDrivers(config, () => clock.nowMs(), { mqtt: transport });
      const daemon = memoryDaemon(config, drivers, clock);
      await daemon.start();
      transport.deliver('th/t', good);
      await clock.advance(90_000); // past minOffS from the safe start
      assert.equal(await heaterLevel(drivers), 1, 'given a cold room, the heater runs');

      transport.deliver('th/t', bad);
      await clock.advance(0);
      assert.equal(await heaterLevel(drivers), 0, 'off at once, not after staleAfterS (180 s)');
      assert.equal(sensorHealth(daemon)?.reason, 'NotFinite');

      transport.deliver('th/t', good);
      await clock.advance(120_000); // minOffS 60
      assert.equal(await heaterLevel(drivers), 1, 'a good value again: regulating again');
      await daemon.stop();
    });
  }

  test('GPIO input as an interlock: given a running heater, when the pin reads a non-finite value, then the loop pauses at once', async () => {
    const clock = new ManualClock(START_MS);
    const sysfsRoot = pi4Sysfs();
    const config = validConfig(
      configText(
        '{ kind: simulated, plant: room, periodS: 10 }',
        `  window: { kind: gpio_input, bcm: 5, periodS: 10 }\ngpio: { sysfsRoot: "${sysfsRoot}" }`,
      ).replace('    sensor: t\n', '    sensor: t\n    interlocks: [{ sensor: window }]\n'),
    );
    const { factory, ports } = fakeFactory(() => 0);
    const drivers = buildDrivers(config, () => clock.nowMs(), { gpio: { portFactory: factory } });
    assert.ok(drivers.sensors.get('window') instanceof GpioInput);
    const daemon = await start(config, drivers, clock);
    // A pin read that yields garbage instead of 0/1; the edge makes the daemon sample at once.
    ports[0]!.edge(Number.NaN as PinLevel);
    await clock.advance(0);
    assert.equal(await heaterLevel(drivers), 0);
    await daemon.stop();
  });
});
