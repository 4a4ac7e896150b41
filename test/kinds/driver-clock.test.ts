/**
 * Drivers that time themselves (a DS18B20's rate limit, a pulse counter's window, the
 * simulated plants) or stamp what arrives (MQTT values, states and availability) get the
 * daemon's monotonic clock from buildDrivers: a wall-clock step (NTP correcting a Pi without a
 * real-time clock) changes nothing they measure, with no time of theirs moved on a step. Each
 * case steps the wall clock 2 h forward without monotonic time passing; on the wall clock each
 * would have seen two hours go by.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { buildDrivers, type Drivers } from '../../src/kinds/build.js';
import { chipFiles, fakeFactory, tempTree } from '../drivers/gpio/fakes.js';
import { FakeTransport } from '../drivers/mqtt/fake-transport.js';
import { validConfig } from '../support/config.js';

const ADDR = '28-0316a2795bff';
const W1_21_562 = '59 01 4b 46 7f ff 0c 10 81 : crc=81 YES\n59 01 4b 46 7f ff 0c 10 81 t=21562\n';
const W1_50 = '20 03 4b 46 7f ff 0c 10 27 : crc=27 YES\n20 03 4b 46 7f ff 0c 10 27 t=50000\n';
const HOUR_MS = 3_600_000;

/** A clock whose wall time steps apart from its monotonic time, as the daemon's does. */
function splitClock() {
  let wallMs = Date.UTC(2026, 0, 1);
  let monoMs = 0;
  return {
    nowMs: () => wallMs,
    monotonicMs: () => monoMs,
    stepWall: (deltaMs: number) => {
      wallMs += deltaMs;
    },
    pass: (deltaMs: number) => {
      wallMs += deltaMs;
      monoMs += deltaMs;
    },
  };
}

function world() {
  const root = tempTree({
    ...chipFiles(512, 'pinctrl-bcm2711', 58),
    'bus/w1/devices/w1_bus_master1/w1_master_slaves': `${ADDR}\n`,
    [`bus/w1/devices/${ADDR}/w1_slave`]: W1_21_562,
  });
  const config = validConfig(`
version: 1
node: { id: pi }
gpio: { sysfsRoot: ${root} }
simulation: { plants: { room: { ambient: 10, timeConstantS: 600 } } }
sensors:
  t: { kind: simulated, plant: room }
  probe: { kind: ds18b20, address: ${ADDR} }
  flow: { kind: pulse_rate, bcm: 27, windowS: 60 }
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20 }
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);
  const clock = splitClock();
  const drivers: Drivers = buildDrivers(config, clock, { gpio: { portFactory: fakeFactory().factory } });
  return { root, clock, drivers, sensor: (id: string) => drivers.sensors.get(id)! };
}

describe('drivers that time themselves run on the monotonic clock', () => {
  test('the simulated plant: a heater on for a wall-clock step of 2 h has not heated the room', async () => {
    const { clock, drivers, sensor } = world();
    await drivers.actuators.get('heater')!.write(1);
    clock.stepWall(2 * HOUR_MS);
    assert.equal(await sensor('t').read(), 10, 'no time passed on the plant’s clock');
    clock.pass(HOUR_MS);
    assert.ok((await sensor('t').read()) > 25, 'an hour of heating on the monotonic clock');
  });

  test('the pulse counter: a wall-clock step does not end its first counting window', async () => {
    const { clock, sensor } = world();
    await sensor('flow').start?.();
    clock.stepWall(2 * HOUR_MS);
    await assert.rejects(sensor('flow').read(), /counting, first rate after 60 s/);
    clock.pass(60_000);
    assert.equal(await sensor('flow').read(), 0);
    await sensor('flow').stop?.();
  });

  test('the DS18B20: a jump to 50 °C across a wall-clock step is still a jump (rate limit)', async () => {
    const { root, clock, sensor } = world();
    assert.equal(await sensor('probe').read(), 21.562);
    writeFileSync(`${root}/bus/w1/devices/${ADDR}/w1_slave`, W1_50);
    clock.stepWall(2 * HOUR_MS);
    await assert.rejects(sensor('probe').read(), /jump from 21\.562 to 50 °C in 0 s is faster than 1 °C\/s/);
  });

  test('MQTT devices: a value, a contact and a plug state stamped before the step are still fresh, their stamps moved by it', async () => {
    const transport = new FakeTransport();
    const config = validConfig(`
version: 1
node: { id: pi }
mqtt: { url: "mqtt://127.0.0.1:1" }
sensors:
  room: { kind: mqtt, topic: th/room, staleAfterS: 600 }
  window: { kind: mqtt_binary, preset: zigbee2mqtt, device: zigbee2mqtt/living_window }
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  room:
    sensor: room
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
    interlocks: [{ sensor: window, pauseWhen: 1 }]
`);
    const clock = splitClock();
    const drivers = buildDrivers(config, clock, { mqtt: transport });
    const sensor = (id: string) => drivers.sensors.get(id)!;
    const heater = drivers.actuators.get('heater')!;
    for (const driver of [sensor('room'), sensor('window'), heater]) await driver.start?.();
    transport.deliver('th/room', '19.5');
    transport.deliver('zigbee2mqtt/living_window/availability', '{"state":"online"}');
    transport.deliver('zigbee2mqtt/living_window', '{"contact":true}');
    transport.deliver('stat/plug/POWER', 'ON');
    const stampedAtMs = clock.nowMs();
    clock.stepWall(2 * HOUR_MS);
    assert.deepEqual(await sensor('room').readStamped!(), { value: 19.5, atMs: stampedAtMs + 2 * HOUR_MS });
    assert.equal((await sensor('window').readStamped!()).atMs, stampedAtMs + 2 * HOUR_MS);
    assert.equal(await heater.observe(), 1, 'the plug state is as fresh as before the step');
    clock.pass(601_000);
    await assert.rejects(sensor('room').read(), /last value on th\/room is 601 s old/);
  });
});
