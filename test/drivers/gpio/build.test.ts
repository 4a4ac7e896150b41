import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { Ds18b20Sensor } from '../../../src/drivers/ds18b20.js';
import { GpioInput } from '../../../src/drivers/gpio/input.js';
import { GpioPulseRate } from '../../../src/drivers/gpio/pulse-rate.js';
import { GpioRelay } from '../../../src/drivers/gpio/relay.js';
import {
  buildDrivers,
  createActuatorDriver,
  createSensorDriver,
  speedProblem,
} from '../../../src/kinds/build.js';
import { driverKey } from '../../../src/kinds/registry.js';
import { chipFiles, fakeFactory, tempTree } from './fakes.js';

/** A Pi 4 on Bookworm (BCM 0 is sysfs 512) with one DS18B20 reading 23.125 °C. */
function piSysfs(): string {
  return tempTree({
    ...chipFiles(512, 'pinctrl-bcm2711', 58),
    ...chipFiles(570, 'raspberrypi-exp-gpio', 8),
    'bus/w1/devices/28-0316a2795bff/temperature': '23125\n',
  });
}

/** A greenhouse: DS18B20, window switch on BCM 27, flow meter on BCM 22, relay heater on BCM 17. */
function piConfig(sysfsRoot: string, edit = (text: string) => text): Config {
  const text = edit(`
version: 1
node: { id: pi }
gpio: { sysfsRoot: ${sysfsRoot} }
sensors:
  probe: { kind: ds18b20 }
  window: { kind: gpio_input, bcm: 27, activeLow: true }
  flow: { kind: pulse_rate, bcm: 22, windowS: 60, factor: 0.5 }
actuators:
  heater: { kind: gpio_relay, bcm: 17 }
loops:
  greenhouse: { sensor: probe, raise: heater, setpoint: 12, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  return loaded.config;
}

/** Builds the greenhouse's drivers on fake pins and a settable clock, and starts them all. */
async function startedGreenhouse(edit?: (text: string) => string) {
  let nowMs = 1_000_000;
  const clock = { now: () => nowMs, advanceS: (s: number) => (nowMs += s * 1000) };
  const { factory, ports } = fakeFactory();
  const config = piConfig(piSysfs(), edit);
  const drivers = buildDrivers(config, clock.now, { gpio: { portFactory: factory } });
  for (const driver of [...drivers.sensors.values(), ...drivers.actuators.values()]) await driver.start?.();
  const portOf = (sysfsNumber: number) => {
    const port = ports.find((p) => p.sysfsNumber === sysfsNumber);
    assert.ok(port, `no port opened for sysfs ${sysfsNumber}`);
    return port;
  };
  return { config, drivers, factory, ports, portOf, clock };
}

describe('buildDrivers with GPIO kinds', () => {
  test('builds each kind as its driver', async () => {
    const { drivers } = await startedGreenhouse();
    assert.ok(drivers.sensors.get('probe') instanceof Ds18b20Sensor);
    assert.ok(drivers.sensors.get('window') instanceof GpioInput);
    assert.ok(drivers.sensors.get('flow') instanceof GpioPulseRate);
    assert.ok(drivers.actuators.get('heater') instanceof GpioRelay);
  });

  test('ds18b20: reads the only probe under the configured sysfsRoot, °C', async () => {
    const { drivers } = await startedGreenhouse();
    assert.equal(await drivers.sensors.get('probe')!.read(), 23.125);
  });

  test('gpio_relay: BCM 17 opened as sysfs 529, released (raw high on an active-low board), driven logically', async () => {
    const { drivers, portOf } = await startedGreenhouse();
    const port = portOf(529);
    assert.equal(port.direction, 'high');
    assert.equal(port.opts.activeLow, true);
    const heater = drivers.actuators.get('heater')!;
    assert.equal(await heater.observe(), 0);
    await heater.write(1);
    assert.deepEqual(port.writes, [1]);
    assert.equal(await heater.observe(), 1);
  });

  test('gpio_input: BCM 27 an input on both edges with the config debounce; an edge calls onValue', async () => {
    const { drivers, portOf } = await startedGreenhouse((t) =>
      t.replace('activeLow: true }', 'activeLow: true, debounceMs: 50 }'),
    );
    const port = portOf(539);
    assert.deepEqual(
      [port.direction, port.opts.edge, port.opts.debounceTimeoutMs, port.opts.activeLow],
      ['in', 'both', 50, true],
    );
    const window = drivers.sensors.get('window')!;
    let heard = 0;
    window.onValue?.(() => heard++);
    port.edge(1);
    assert.equal(heard, 1);
    assert.equal(await window.read(), 1);
  });

  test('pulse_rate: BCM 22 counted on rising edges; pulses per minute × factor over windowS', async () => {
    const { drivers, portOf, clock } = await startedGreenhouse();
    const port = portOf(534);
    assert.deepEqual([port.direction, port.opts.edge], ['in', 'rising']);
    const flow = drivers.sensors.get('flow')!;
    await assert.rejects(flow.read(), /first rate after 60 s/);
    for (let i = 0; i < 30; i++) {
      clock.advanceS(2);
      port.edge(1);
    }
    // 30 pulses in the last 60 s = 30 pulses/min, × factor 0.5.
    assert.equal(await flow.read(), 15);
  });

  test('gpio.base overrides detection: BCM 17 is sysfs base + 17', async () => {
    const { portOf } = await startedGreenhouse((t) =>
      t.replace(/gpio: \{ sysfsRoot: (\S+) \}/, 'gpio: { sysfsRoot: $1, base: 0 }'),
    );
    assert.equal(portOf(17).direction, 'high');
  });

  test('drivers created later (a reload) open pins through the same port factory', async () => {
    const { config, drivers, ports } = await startedGreenhouse();
    const before = ports.length;
    const relay = createActuatorDriver(config, 'heater', drivers, () => 0);
    const input = createSensorDriver(config, 'window', drivers, () => 0);
    await relay.start?.();
    await input.start?.();
    assert.equal(ports.length, before + 2);
  });

  test('without a port factory the drivers are still built: nothing is opened before start()', () => {
    const drivers = buildDrivers(piConfig('/nonexistent'), () => 0);
    assert.ok(drivers.actuators.get('heater') instanceof GpioRelay);
    assert.equal((drivers.actuators.get('heater') as GpioRelay).pin, undefined);
  });

  test('--speed is refused: GPIO drivers are not simulated', () => {
    const drivers = buildDrivers(piConfig('/nonexistent'), () => 0, {
      gpio: { portFactory: fakeFactory().factory },
    });
    assert.equal(
      speedProblem(drivers),
      '--speed needs every driver to be simulated; real drivers: probe, window, flow, heater',
    );
  });
});

describe('driverKey of GPIO kinds', () => {
  // [what, edit, section, id, same driver?]
  const cases: [string, (text: string) => string, 'sensors' | 'actuators', string, boolean][] = [
    ['relay minOnS', (t) => t.replace('bcm: 17 }', 'bcm: 17, minOnS: 60 }'), 'actuators', 'heater', true],
    ['relay windowS', (t) => t.replace('bcm: 17 }', 'bcm: 17, windowS: 300 }'), 'actuators', 'heater', true],
    [
      'relay safeState',
      (t) => t.replace('bcm: 17 }', 'bcm: 17, safeState: on }'),
      'actuators',
      'heater',
      true,
    ],
    ['relay pin', (t) => t.replace('bcm: 17 }', 'bcm: 23 }'), 'actuators', 'heater', false],
    [
      'relay activeLow',
      (t) => t.replace('bcm: 17 }', 'bcm: 17, activeLow: false }'),
      'actuators',
      'heater',
      false,
    ],
    [
      'input periodS',
      (t) => t.replace('activeLow: true }', 'activeLow: true, periodS: 5 }'),
      'sensors',
      'window',
      true,
    ],
    [
      'input debounce',
      (t) => t.replace('activeLow: true }', 'activeLow: true, debounceMs: 5 }'),
      'sensors',
      'window',
      false,
    ],
    [
      "pulse counting window (the driver's, not a relay's)",
      (t) => t.replace('windowS: 60', 'windowS: 30'),
      'sensors',
      'flow',
      false,
    ],
    ['pulse factor', (t) => t.replace('factor: 0.5', 'factor: 0.25'), 'sensors', 'flow', false],
    [
      'probe address',
      (t) => t.replace('kind: ds18b20 }', 'kind: ds18b20, address: 28-0316a2795bff }'),
      'sensors',
      'probe',
      false,
    ],
  ];
  for (const [what, edit, section, id, same] of cases) {
    test(`changing ${what} ${same ? 'keeps' : 'replaces'} the driver`, () => {
      const before = piConfig('/sys')[section][id]!;
      const after = piConfig('/sys', edit)[section][id]!;
      assert.notDeepEqual(before, after, 'the edit changed the section');
      assert.equal(driverKey(before) === driverKey(after), same);
    });
  }
});
