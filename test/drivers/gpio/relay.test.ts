import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GpioRelay } from '../../../src/drivers/gpio/relay.js';
import { fakeFactory, pi4Sysfs } from './fakes.js';

/** BCM 17 on a Pi 4 with Bookworm. */
const BCM = 17;
const SYSFS = 529;

function relay(activeLow: boolean, sysfsRoot: string, levelOf?: (n: number) => 0 | 1) {
  const { factory, ports } = fakeFactory(levelOf);
  const driver = new GpioRelay({ id: 'heater', bcm: BCM, activeLow, sysfsRoot, portFactory: factory });
  return { driver, ports };
}

describe('GpioRelay', () => {
  test('is a real (not simulated) relay', () => {
    const { driver } = relay(true, pi4Sysfs());
    assert.equal(driver.kind, 'relay');
    assert.equal(driver.simulated, false);
  });

  const fresh = [
    { board: 'active-low', activeLow: true, direction: 'high' },
    { board: 'active-high', activeLow: false, direction: 'low' },
  ] as const;
  for (const c of fresh) {
    test(`given a pin not exported, an ${c.board} relay is exported with direction '${c.direction}' (released) and reads 0`, async () => {
      const { driver, ports } = relay(c.activeLow, pi4Sysfs());
      await driver.start();
      assert.equal(ports.length, 1);
      const port = ports[0]!;
      assert.equal(port.sysfsNumber, SYSFS);
      assert.equal(port.direction, c.direction);
      assert.deepEqual(port.opts, { activeLow: c.activeLow, reconfigureDirection: true });
      assert.deepEqual(port.writes, []);
      assert.equal(await driver.observe(), 0);
      assert.deepEqual(driver.pin, {
        sysfsNumber: SYSFS,
        chip: 'pinctrl-bcm2711',
        adopted: false,
        levelAtStart: 0,
      });
    });
  }

  test('given a pin exported as an input, it is exported released, not adopted', async () => {
    const { driver, ports } = relay(true, pi4Sysfs({ [SYSFS]: 'in' }));
    await driver.start();
    assert.equal(ports[0]!.direction, 'high');
    assert.equal(driver.pin?.adopted, false);
  });

  for (const level of [0, 1] as const) {
    test(`given a pin already exported as an output at ${level} (a restart), it is adopted without writing direction or level`, async () => {
      const { driver, ports } = relay(true, pi4Sysfs({ [SYSFS]: 'out' }), () => level);
      await driver.start();
      const port = ports[0]!;
      assert.equal(port.direction, 'out');
      assert.deepEqual(port.opts, { activeLow: true, reconfigureDirection: false });
      assert.deepEqual(port.writes, []);
      assert.equal(await driver.observe(), level);
      assert.deepEqual(driver.pin, {
        sysfsNumber: SYSFS,
        chip: 'pinctrl-bcm2711',
        adopted: true,
        levelAtStart: level,
      });
    });
  }

  test('observe() reads the pin back every time: a change made outside is seen', async () => {
    const { driver, ports } = relay(true, pi4Sysfs());
    await driver.start();
    assert.equal(await driver.observe(), 0);
    ports[0]!.level = 1;
    assert.equal(await driver.observe(), 1);
  });

  test('observe() is unknown before start and when the read fails', async () => {
    const { driver, ports } = relay(true, pi4Sysfs());
    assert.equal(await driver.observe(), undefined);
    await driver.start();
    ports[0]!.readError = new Error('EIO');
    assert.equal(await driver.observe(), undefined);
  });

  test('write() drives the logical level and the readback follows', async () => {
    const { driver, ports } = relay(true, pi4Sysfs());
    await driver.start();
    await driver.write(1);
    await driver.write(1);
    await driver.write(0);
    assert.deepEqual(ports[0]!.writes, [1, 1, 0]);
    assert.equal(await driver.observe(), 0);
  });

  for (const level of [0.5, -1, 2, Number.NaN]) {
    test(`write(${level}) is rejected with RangeError and nothing is written`, async () => {
      const { driver, ports } = relay(true, pi4Sysfs());
      await driver.start();
      await assert.rejects(driver.write(level), RangeError);
      assert.deepEqual(ports[0]!.writes, []);
    });
  }

  test('write() before start() rejects', async () => {
    const { driver } = relay(true, pi4Sysfs());
    await assert.rejects(driver.write(1), /relay heater: GPIO 17 not started/);
  });

  test('stop() leaves the level as commanded and keeps the export (the next start adopts it)', async () => {
    const { driver, ports } = relay(true, pi4Sysfs());
    await driver.start();
    await driver.write(1);
    await driver.stop();
    assert.equal(ports[0]!.unexported, false);
    assert.deepEqual(ports[0]!.writes, [1]);
    assert.equal(await driver.observe(), undefined);
  });

  test('stop() unexports when asked to', async () => {
    const { factory, ports } = fakeFactory();
    const driver = new GpioRelay({
      id: 'heater',
      bcm: BCM,
      activeLow: true,
      sysfsRoot: pi4Sysfs(),
      portFactory: factory,
      unexportOnStop: true,
    });
    await driver.start();
    await driver.stop();
    assert.equal(ports[0]!.unexported, true);
  });

  test('start() twice opens the pin once', async () => {
    const { driver, ports } = relay(true, pi4Sysfs());
    await driver.start();
    await driver.start();
    assert.equal(ports.length, 1);
  });

  test('a chip override is passed to the resolution', async () => {
    const { factory, ports } = fakeFactory();
    const driver = new GpioRelay({
      id: 'heater',
      bcm: 4,
      activeLow: false,
      sysfsRoot: pi4Sysfs(),
      portFactory: factory,
      chip: { base: 0 },
    });
    await driver.start();
    assert.equal(ports[0]!.sysfsNumber, 4);
  });

  test('an opening error (permission) propagates from start() and leaves the relay unstarted', async () => {
    const driver = new GpioRelay({
      id: 'heater',
      bcm: BCM,
      activeLow: true,
      sysfsRoot: pi4Sysfs(),
      portFactory: async () => {
        throw new Error('GPIO sysfs 529: permission denied on /sys/class/gpio: add the homeostat user…');
      },
    });
    await assert.rejects(driver.start(), /permission denied/);
    assert.equal(driver.pin, undefined);
    await assert.rejects(driver.write(0), /not started/);
  });
});
