import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_INPUT_DEBOUNCE_MS, GpioInput } from '../../../src/drivers/gpio/input.js';
import { fakeFactory, pi4Sysfs } from './fakes.js';

/** A window contact on BCM 27 of a Pi 4 (sysfs 539). */
function windowContact(opts: { activeLow?: boolean; debounceMs?: number; sysfsRoot?: string } = {}) {
  const { factory, ports } = fakeFactory();
  const driver = new GpioInput({
    id: 'window',
    bcm: 27,
    sysfsRoot: opts.sysfsRoot ?? pi4Sysfs(),
    portFactory: factory,
    activeLow: opts.activeLow,
    debounceMs: opts.debounceMs,
  });
  return { driver, ports };
}

describe('GpioInput', () => {
  test('start() exports an input watching both edges, debounced 20 ms by default', async () => {
    const { driver, ports } = windowContact();
    await driver.start();
    assert.equal(driver.simulated, false);
    const port = ports[0]!;
    assert.equal(port.sysfsNumber, 539);
    assert.equal(port.direction, 'in');
    assert.deepEqual(port.opts, {
      activeLow: false,
      edge: 'both',
      debounceTimeoutMs: DEFAULT_INPUT_DEBOUNCE_MS,
      reconfigureDirection: true,
    });
  });

  test('activeLow and debounceMs are passed to the pin', async () => {
    const { driver, ports } = windowContact({ activeLow: true, debounceMs: 50 });
    await driver.start();
    assert.equal(ports[0]!.opts.activeLow, true);
    assert.equal(ports[0]!.opts.debounceTimeoutMs, 50);
  });

  test('read() returns the level now: window closed 0, open 1', async () => {
    const { driver, ports } = windowContact();
    await driver.start();
    assert.equal(await driver.read(), 0);
    ports[0]!.level = 1;
    assert.equal(await driver.read(), 1);
  });

  test('each edge calls the onValue listener; the value comes from read(), not the edge', async () => {
    const { driver, ports } = windowContact();
    let calls = 0;
    driver.onValue(() => calls++);
    await driver.start();
    ports[0]!.edge(1);
    assert.equal(calls, 1);
    assert.equal(await driver.read(), 1);
    ports[0]!.edge(0);
    assert.equal(calls, 2);
    assert.equal(await driver.read(), 0);
  });

  test('onValue replaces the previous listener', async () => {
    const { driver, ports } = windowContact();
    const heard: string[] = [];
    driver.onValue(() => heard.push('first'));
    driver.onValue(() => heard.push('second'));
    await driver.start();
    ports[0]!.edge(1);
    assert.deepEqual(heard, ['second']);
  });

  test('stop() unexports the pin and silences the listener; read() then rejects', async () => {
    const { driver, ports } = windowContact();
    let calls = 0;
    driver.onValue(() => calls++);
    await driver.start();
    await driver.stop();
    assert.equal(ports[0]!.unexported, true);
    ports[0]!.edge(1);
    assert.equal(calls, 0);
    await assert.rejects(driver.read(), /input window: GPIO 27 not started/);
  });

  test('a pin already exported as an output (a relay) is refused, not turned into an input', async () => {
    const { driver, ports } = windowContact({ sysfsRoot: pi4Sysfs({ 539: 'out' }) });
    await assert.rejects(driver.start(), /GPIO 27 \(sysfs 539\) is exported as an output/);
    assert.equal(ports.length, 0);
  });

  test('a negative debounce is rejected at construction', () => {
    assert.throws(() => windowContact({ debounceMs: -1 }), RangeError);
  });
});
