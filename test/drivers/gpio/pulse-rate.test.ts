import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GpioPulseRate } from '../../../src/drivers/gpio/pulse-rate.js';
import { type FakePort, fakeFactory, pi4Sysfs } from './fakes.js';

const START_MS = 1_700_000_000_000;

/** A flow meter on BCM 22 (sysfs 534), a manual clock, and a way to raise pulses at given times. */
async function flowMeter(opts: { windowS: number; factor?: number; edge?: 'rising' | 'falling' }) {
  let nowMs = START_MS;
  const { factory, ports } = fakeFactory();
  const driver = new GpioPulseRate({
    id: 'flow',
    bcm: 22,
    sysfsRoot: pi4Sysfs(),
    portFactory: factory,
    nowMs: () => nowMs,
    ...opts,
  });
  await driver.start();
  const port: FakePort = ports[0]!;
  return {
    driver,
    port,
    at: (s: number) => {
      nowMs = START_MS + s * 1000;
    },
    /** One pulse at each of `timesS` (seconds after start). */
    pulses: (timesS: number[]) => {
      for (const s of timesS) {
        nowMs = START_MS + s * 1000;
        port.edge(1);
      }
    },
  };
}

/** `count` pulses evenly spread over (fromS, toS]. */
const spread = (count: number, fromS: number, toS: number) =>
  Array.from({ length: count }, (_, i) => fromS + ((toS - fromS) * (i + 1)) / count);

describe('GpioPulseRate', () => {
  test('start() exports an input counting rising edges, without debounce', async () => {
    const { port } = await flowMeter({ windowS: 10 });
    assert.equal(port.sysfsNumber, 534);
    assert.equal(port.direction, 'in');
    assert.deepEqual(port.opts, { activeLow: false, edge: 'rising', reconfigureDirection: true });
  });

  test('the edge can be falling', async () => {
    const { port } = await flowMeter({ windowS: 10, edge: 'falling' });
    assert.equal(port.opts.edge, 'falling');
  });

  test('before a full window has been counted, read() rejects', async () => {
    const m = await flowMeter({ windowS: 10 });
    m.pulses(spread(5, 0, 9.9));
    m.at(9.99);
    await assert.rejects(m.driver.read(), /counting, first rate after 10 s/);
  });

  // read = pulses in the last windowS / (windowS / 60) × factor
  const cases = [
    { what: 'no pulses', windowS: 10, factor: 1, pulsesS: [], readAtS: 10, rate: 0 },
    {
      what: '50 pulses in 10 s = 300 pulses/min',
      windowS: 10,
      factor: 1,
      pulsesS: spread(50, 0, 10),
      readAtS: 10,
      rate: 300,
    },
    {
      what: 'YF-S201 (450 pulses/L): 75 pulses in 10 s = 1 L/min',
      windowS: 10,
      factor: 1 / 450,
      pulsesS: spread(75, 0, 10),
      readAtS: 10,
      rate: 1,
    },
    {
      what: 'pulses older than the window no longer count',
      windowS: 10,
      factor: 1,
      pulsesS: [...spread(100, 0, 5), ...spread(10, 15, 20)],
      readAtS: 20,
      rate: 60,
    },
    {
      what: 'a pulse exactly windowS old has left the window',
      windowS: 10,
      factor: 1,
      pulsesS: [10, 15],
      readAtS: 20,
      rate: 6,
    },
    {
      what: 'the flow stopped a window ago: 0',
      windowS: 10,
      factor: 1,
      pulsesS: spread(40, 0, 10),
      readAtS: 20,
      rate: 0,
    },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const m = await flowMeter({ windowS: c.windowS, factor: c.factor });
      m.pulses(c.pulsesS);
      m.at(c.readAtS);
      const rate = await m.driver.read();
      assert.ok(Math.abs(rate - c.rate) < 1e-9, `expected ${c.rate}, got ${rate}`);
    });
  }

  test('the window slides: the rate follows a change in flow', async () => {
    const m = await flowMeter({ windowS: 10 });
    m.pulses(spread(20, 0, 10)); // 120/min
    m.at(10);
    assert.equal(await m.driver.read(), 120);
    m.pulses(spread(40, 10, 15)); // 480/min for 5 s
    m.at(15);
    assert.equal(await m.driver.read(), (50 / 10) * 60);
  });

  test('a long pulse train at 100 Hz: only the last window counts', async () => {
    const m = await flowMeter({ windowS: 1 });
    m.pulses(spread(10_000, 0, 100)); // 100 pulses/s for 100 s
    m.at(100);
    assert.equal(await m.driver.read(), 100 * 60);
  });

  test('stop() unexports the pin; pulses after it are not counted and read() rejects', async () => {
    const m = await flowMeter({ windowS: 10 });
    await m.driver.stop();
    assert.equal(m.port.unexported, true);
    await assert.rejects(m.driver.read(), /not started/);
  });

  const invalid = [
    { windowS: 0, factor: 1, message: /windowS must be > 0/ },
    { windowS: 10, factor: 0, message: /factor must be > 0/ },
    { windowS: 10, factor: Number.NaN, message: /factor must be > 0/ },
  ];
  for (const c of invalid) {
    test(`rejects windowS ${c.windowS}, factor ${c.factor}`, () => {
      const { factory } = fakeFactory();
      assert.throws(
        () =>
          new GpioPulseRate({
            id: 'flow',
            bcm: 22,
            sysfsRoot: '/x',
            portFactory: factory,
            nowMs: () => 0,
            ...c,
          }),
        c.message,
      );
    });
  }
});
