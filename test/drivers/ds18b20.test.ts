import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ds18b20Sensor, listDs18b20, parseW1Slave } from '../../src/drivers/ds18b20.js';
import { tempTree } from './gpio/fakes.js';

const ADDR = '28-0316a2795bff';

/** Real w1_slave contents (scratchpad, the kernel's CRC verdict, t= in m°C). */
const W1 = {
  c21_562: '59 01 4b 46 7f ff 0c 10 81 : crc=81 YES\n59 01 4b 46 7f ff 0c 10 81 t=21562\n',
  c21_625: '5a 01 4b 46 7f ff 0c 10 44 : crc=44 YES\n5a 01 4b 46 7f ff 0c 10 44 t=21625\n',
  c22_062: '61 01 4b 46 7f ff 0c 10 57 : crc=57 YES\n61 01 4b 46 7f ff 0c 10 57 t=22062\n',
  c50: '20 03 4b 46 7f ff 0c 10 27 : crc=27 YES\n20 03 4b 46 7f ff 0c 10 27 t=50000\n',
  c84_5: '48 05 4b 46 7f ff 0c 10 62 : crc=62 YES\n48 05 4b 46 7f ff 0c 10 62 t=84500\n',
  c85_5: '58 05 4b 46 7f ff 0c 10 36 : crc=36 YES\n58 05 4b 46 7f ff 0c 10 36 t=85500\n',
  c0: '00 00 4b 46 7f ff 0c 10 c8 : crc=c8 YES\n00 00 4b 46 7f ff 0c 10 c8 t=0\n',
  minus25_375: '6a fe 4b 46 7f ff 0c 10 be : crc=be YES\n6a fe 4b 46 7f ff 0c 10 be t=-25375\n',
  minus55: '90 fc 4b 46 7f ff 0c 10 4f : crc=4f YES\n90 fc 4b 46 7f ff 0c 10 4f t=-55000\n',
  c125: 'd0 07 4b 46 7f ff 0c 10 f4 : crc=f4 YES\nd0 07 4b 46 7f ff 0c 10 f4 t=125000\n',
  c128: '00 08 4b 46 7f ff 0c 10 39 : crc=39 YES\n00 08 4b 46 7f ff 0c 10 39 t=128000\n',
  minus56: '80 fc 4b 46 7f ff 0c 10 1b : crc=1b YES\n80 fc 4b 46 7f ff 0c 10 1b t=-56000\n',
  /** The scratchpad at power-on, before any conversion: 85 °C with a valid CRC. */
  powerOn: '50 05 4b 46 7f ff 0c 10 1c : crc=1c YES\n50 05 4b 46 7f ff 0c 10 1c t=85000\n',
  /** Last byte corrupted in transit: the kernel's CRC over bytes 0–7 (81) differs. */
  crcNo: '59 01 4b 46 7f ff 0c 10 80 : crc=81 NO\n59 01 4b 46 7f ff 0c 10 80 t=21562\n',
  /** Data line held low: every bit reads 0, and the CRC of zeros is 0, so the kernel says YES. */
  allZero: '00 00 00 00 00 00 00 00 00 : crc=00 YES\n00 00 00 00 00 00 00 00 00 t=0\n',
  /** Nobody answering: every bit reads 1. */
  allFf: 'ff ff ff ff ff ff ff ff ff : crc=c9 NO\nff ff ff ff ff ff ff ff ff t=-62\n',
  /** A read cut short. */
  truncated: '59 01 4b 46 7f ff 0c 10 81 : crc=81 YES\n',
};

/** A bus with the given devices (address → files) and a manual clock. */
function bus(devices: Record<string, Record<string, string>>) {
  const files: Record<string, string> = { 'bus/w1/devices/w1_bus_master1/w1_master_slaves': '' };
  for (const [address, deviceFiles] of Object.entries(devices)) {
    for (const [name, content] of Object.entries(deviceFiles))
      files[`bus/w1/devices/${address}/${name}`] = content;
  }
  const root = tempTree(files);
  let nowMs = 1_700_000_000_000;
  const dir = (address: string) => join(root, 'bus/w1/devices', address);
  return {
    root,
    nowMs: () => nowMs,
    advanceS: (s: number) => {
      nowMs += s * 1000;
    },
    write: (address: string, name: string, content: string) => {
      mkdirSync(dir(address), { recursive: true });
      writeFileSync(join(dir(address), name), content);
    },
    remove: (address: string) => rmSync(dir(address), { recursive: true }),
  };
}

function sensor(
  b: ReturnType<typeof bus>,
  extra: Partial<ConstructorParameters<typeof Ds18b20Sensor>[0]> = {},
) {
  return new Ds18b20Sensor({ id: 'tank', address: ADDR, sysfsRoot: b.root, nowMs: b.nowMs, ...extra });
}

describe('listDs18b20', () => {
  test('lists the 28-… devices, sorted, skipping the bus master and ghost 00-… entries', async () => {
    const root = fileURLToPath(new URL('../fixtures/sys/w1-two-sensors', import.meta.url));
    assert.deepEqual(await listDs18b20(root), ['28-0316a2795bff', '28-3c01d607d4a1']);
  });

  test('no 1-Wire bus: none', async () => {
    assert.deepEqual(await listDs18b20('/nonexistent-sysfs'), []);
  });
});

describe('parseW1Slave', () => {
  test('reads the scratchpad bytes, the CRC verdict and t=', () => {
    assert.deepEqual(parseW1Slave(W1.c21_562), {
      bytes: [0x59, 0x01, 0x4b, 0x46, 0x7f, 0xff, 0x0c, 0x10, 0x81],
      crcOk: true,
      milliC: 21562,
    });
    assert.equal(parseW1Slave(W1.crcNo).crcOk, false);
  });
});

describe('Ds18b20Sensor: one read from w1_slave', () => {
  const cases: { what: string; w1: string; tempC?: number; error?: RegExp }[] = [
    { what: 'a good read', w1: W1.c21_562, tempC: 21.562 },
    { what: 'below zero', w1: W1.minus25_375, tempC: -25.375 },
    { what: 'a real 0 °C (config bytes present)', w1: W1.c0, tempC: 0 },
    { what: 'the bottom of the range', w1: W1.minus55, tempC: -55 },
    { what: 'the top of the range', w1: W1.c125, tempC: 125 },
    { what: 'a CRC failure', w1: W1.crcNo, error: /28-0316a2795bff: CRC error/ },
    {
      what: 'the power-on value with nothing before it',
      w1: W1.powerOn,
      error: /85 °C is the power-on value/,
    },
    { what: 'an all-zero scratchpad (crc=00 YES)', w1: W1.allZero, error: /all-zero read/ },
    { what: 'an all-ff scratchpad', w1: W1.allFf, error: /CRC error|all-ff/ },
    {
      what: 'above the plausible range',
      w1: W1.c128,
      error: /128 °C is outside the plausible range -55\.\.125/,
    },
    { what: 'below the plausible range', w1: W1.minus56, error: /-56 °C is outside/ },
    { what: 'a truncated file', w1: W1.truncated, error: /w1_slave not understood/ },
  ];
  for (const c of cases) {
    test(`${c.what}: ${c.error ? 'rejected' : `${c.tempC} °C`}`, async () => {
      const s = sensor(bus({ [ADDR]: { w1_slave: c.w1 } }));
      if (c.error) await assert.rejects(s.read(), c.error);
      else assert.equal(await s.read(), c.tempC);
    });
  }

  test('all-ff is rejected even if a kernel said YES', async () => {
    const ffYes = W1.allFf.replace('crc=c9 NO', 'crc=ff YES');
    await assert.rejects(sensor(bus({ [ADDR]: { w1_slave: ffYes } })).read(), /all-ff read/);
  });

  test('a custom plausible range', async () => {
    const s = sensor(bus({ [ADDR]: { w1_slave: W1.c50 } }), { plausible: { min: 0, max: 40 } });
    await assert.rejects(s.read(), /50 °C is outside the plausible range 0\.\.40/);
  });
});

describe('Ds18b20Sensor: the temperature file', () => {
  test('is preferred when present', async () => {
    const read: string[] = [];
    const b = bus({ [ADDR]: { temperature: '21562\n', w1_slave: W1.c50 } });
    const s = sensor(b, {
      readFile: async (path) => {
        read.push(path.slice(b.root.length));
        return readFileSync(path, 'utf8');
      },
    });
    assert.equal(await s.read(), 21.562);
    assert.deepEqual(read, [`/bus/w1/devices/${ADDR}/temperature`]);
  });

  test("an EIO from it (the kernel's CRC check failed) is a CRC error", async () => {
    const b = bus({ [ADDR]: { temperature: '21562\n' } });
    const s = sensor(b, {
      readFile: async () => {
        throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
      },
    });
    await assert.rejects(s.read(), /read failed \(CRC error or bus noise\)/);
  });

  const zero = [
    { what: 'a real 0 °C (w1_slave confirms)', w1: W1.c0, tempC: 0 },
    { what: 'a line stuck low (w1_slave is all zero)', w1: W1.allZero, error: /all-zero read/ },
  ];
  for (const c of zero) {
    test(`exactly 0 is checked against w1_slave: ${c.what}`, async () => {
      const s = sensor(bus({ [ADDR]: { temperature: '0\n', w1_slave: c.w1 } }));
      if (c.error) await assert.rejects(s.read(), c.error);
      else assert.equal(await s.read(), c.tempC);
    });
  }

  test('85000 from it is the power-on value too', async () => {
    await assert.rejects(sensor(bus({ [ADDR]: { temperature: '85000\n' } })).read(), /power-on value/);
  });

  test('garbage in it is rejected', async () => {
    await assert.rejects(
      sensor(bus({ [ADDR]: { temperature: 'abc\n' } })).read(),
      /temperature not understood/,
    );
  });
});

describe('Ds18b20Sensor: over several reads', () => {
  test('85000 right after a reading near 85 °C is a real 85 °C', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c84_5 } });
    const s = sensor(b);
    assert.equal(await s.read(), 84.5);
    b.advanceS(10);
    b.write(ADDR, 'w1_slave', W1.powerOn);
    assert.equal(await s.read(), 85);
  });

  test('85000 after a reading far from it (a brownout) is rejected, however often it repeats', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c21_562 } });
    const s = sensor(b);
    assert.equal(await s.read(), 21.562);
    b.write(ADDR, 'w1_slave', W1.powerOn);
    for (let i = 0; i < 3; i++) {
      b.advanceS(100);
      await assert.rejects(s.read(), /power-on value/);
    }
  });

  test('a jump faster than maxRatePerS is rejected once and accepted when the next read confirms it', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c21_562 } });
    const s = sensor(b);
    assert.equal(await s.read(), 21.562);
    b.advanceS(5);
    b.write(ADDR, 'w1_slave', W1.c50);
    await assert.rejects(s.read(), /jump from 21\.562 to 50 °C in 5 s is faster than 1 °C\/s/);
    b.advanceS(5);
    assert.equal(await s.read(), 50);
  });

  test('a lone spike between normal reads is never accepted', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c21_562 } });
    const s = sensor(b);
    const sequence = [
      { w1: W1.c21_562, expect: 21.562 },
      { w1: W1.c50, expect: 'rejected' },
      { w1: W1.c21_625, expect: 21.625 },
      { w1: W1.c50, expect: 'rejected' },
    ] as const;
    for (const step of sequence) {
      b.write(ADDR, 'w1_slave', step.w1);
      if (step.expect === 'rejected') await assert.rejects(s.read(), /faster than/);
      else assert.equal(await s.read(), step.expect);
      b.advanceS(5);
    }
  });

  test('a change within the rate is accepted at once (|Δ| ≤ rate × Δt + 0.5 °C)', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c21_562 } });
    const s = sensor(b, { maxRatePerS: 0.01 });
    assert.equal(await s.read(), 21.562);
    b.advanceS(1);
    b.write(ADDR, 'w1_slave', W1.c22_062);
    assert.equal(await s.read(), 22.062);
  });

  test('a device that vanishes is "not present", then reads again when it comes back', async () => {
    const b = bus({ [ADDR]: { w1_slave: W1.c21_562 } });
    const s = sensor(b);
    assert.equal(await s.read(), 21.562);
    b.remove(ADDR);
    b.advanceS(10);
    await assert.rejects(s.read(), /device 28-0316a2795bff not present/);
    b.write(ADDR, 'w1_slave', W1.c21_625);
    b.advanceS(10);
    assert.equal(await s.read(), 21.625);
  });
});

describe('Ds18b20Sensor: which device', () => {
  test('without an address, the only DS18B20 present is used, and kept when a second appears', async () => {
    const b = bus({ '28-000000000001': { w1_slave: W1.c21_562 } });
    const s = new Ds18b20Sensor({ id: 'tank', sysfsRoot: b.root, nowMs: b.nowMs });
    assert.equal(await s.read(), 21.562);
    b.write('28-000000000000', 'w1_slave', W1.c50);
    assert.equal(await s.read(), 21.562);
  });

  test('without an address and several present: an error listing them', async () => {
    const b = bus({ '28-000000000001': { w1_slave: W1.c21_562 }, '28-000000000002': { w1_slave: W1.c50 } });
    const s = new Ds18b20Sensor({ id: 'tank', sysfsRoot: b.root, nowMs: b.nowMs });
    await assert.rejects(
      s.read(),
      /several DS18B20 present \(28-000000000001, 28-000000000002\): set the sensor's address/,
    );
  });

  test('without an address and none present: an error saying how to enable 1-Wire', async () => {
    const b = bus({});
    const s = new Ds18b20Sensor({ id: 'tank', sysfsRoot: b.root, nowMs: b.nowMs });
    await assert.rejects(s.read(), /no DS18B20 under .*bus\/w1\/devices: enable 1-Wire \(dtoverlay=w1-gpio/);
  });

  const invalid = [
    {
      what: 'an address that is not 28-<12 hex>',
      opts: { address: '../../etc' },
      message: /address must look like/,
    },
    {
      what: 'plausible min >= max',
      opts: { plausible: { min: 10, max: 10 } },
      message: /plausible\.min must be < plausible\.max/,
    },
    { what: 'maxRatePerS <= 0', opts: { maxRatePerS: 0 }, message: /maxRatePerS must be > 0/ },
  ];
  for (const c of invalid) {
    test(`rejects ${c.what}`, () => {
      assert.throws(
        () => new Ds18b20Sensor({ id: 'tank', sysfsRoot: '/x', nowMs: () => 0, ...c.opts }),
        c.message,
      );
    });
  }
});
