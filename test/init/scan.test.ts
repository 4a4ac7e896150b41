/** init's hardware scan, on the fixture sysfs trees: what it finds, and how it lists it. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatScan } from '../../src/init/report.js';
import { foundHardware, scanHardware } from '../../src/init/scan.js';
import { fixture } from './helpers.js';

interface Expected {
  bus: boolean;
  /** `address reading` (°C), or `address !error pattern`. */
  sensors: string[];
  chips: string[];
  /** The main chip's label and base, or undefined. */
  main?: string;
  hardware: boolean;
}

const TABLE: [tree: string, expected: Expected][] = [
  [
    'pi4-one-ds18b20',
    {
      bus: true,
      sensors: ['28-0316a2795bff 23.125'],
      chips: ['gpiochip512', 'gpiochip570'],
      main: 'pinctrl-bcm2711@512',
      hardware: true,
    },
  ],
  [
    'pi5-two-ds18b20',
    {
      bus: true,
      sensors: ['28-0316a2795bff 21.625', '28-3c01d607d4a1 !CRC error'],
      chips: ['gpiochip512', 'gpiochip544', 'gpiochip548', 'gpiochip565', 'gpiochip571'],
      main: 'pinctrl-rp1@571',
      hardware: true,
    },
  ],
  [
    'w1-two-sensors',
    { bus: true, sensors: ['28-0316a2795bff 23.125', '28-3c01d607d4a1 23'], chips: [], hardware: true },
  ],
  [
    'pi4-bookworm',
    {
      bus: false,
      sensors: [],
      chips: ['gpiochip512', 'gpiochip570'],
      main: 'pinctrl-bcm2711@512',
      hardware: true,
    },
  ],
  [
    'pi5-bookworm',
    {
      bus: false,
      sensors: [],
      chips: ['gpiochip512', 'gpiochip544', 'gpiochip548', 'gpiochip565', 'gpiochip571'],
      main: 'pinctrl-rp1@571',
      hardware: true,
    },
  ],
  [
    'pi3-legacy',
    {
      bus: false,
      sensors: [],
      chips: ['gpiochip0', 'gpiochip504'],
      main: 'pinctrl-bcm2835@0',
      hardware: true,
    },
  ],
  [
    'unknown-soc',
    {
      bus: false,
      sensors: [],
      chips: ['gpiochip500', 'gpiochip600'],
      main: 'pinctrl-future@600',
      hardware: true,
    },
  ],
  ['expanders-only', { bus: false, sensors: [], chips: ['gpiochip500'], hardware: true }],
  ['no-chips', { bus: false, sensors: [], chips: [], hardware: false }],
  ['w1-bus-empty', { bus: true, sensors: [], chips: [], hardware: false }],
  ['does-not-exist', { bus: false, sensors: [], chips: [], hardware: false }],
];

describe('scanHardware over the fixture trees', () => {
  for (const [tree, expected] of TABLE) {
    test(`${tree}: ${expected.sensors.length} probe(s), ${expected.chips.length} chip(s), main ${expected.main ?? 'none'}`, async () => {
      const scan = await scanHardware(fixture(tree), { nowMs: () => 0 });
      assert.equal(scan.oneWireBus, expected.bus);
      assert.deepEqual(
        scan.sensors.map((s) => (s.tempC !== undefined ? `${s.address} ${s.tempC}` : `${s.address} !`)),
        expected.sensors.map((s) => s.replace(/!.*/, '!')),
      );
      expected.sensors.forEach((s, i) => {
        const pattern = /!(.*)$/.exec(s)?.[1];
        if (pattern) assert.match(scan.sensors[i]!.error ?? '', new RegExp(pattern));
      });
      assert.deepEqual(
        scan.chips.map((c) => c.name),
        expected.chips,
      );
      assert.equal(scan.mainChip && `${scan.mainChip.label}@${scan.mainChip.base}`, expected.main);
      assert.equal(foundHardware(scan), expected.hardware);
    });
  }

  test('unknown-soc: the label is read from the tree (the table above names it)', async () => {
    const scan = await scanHardware(fixture('unknown-soc'));
    assert.ok(scan.mainChip, 'a chip with >= 54 lines is the fallback');
    assert.equal(scan.mainChip.name, 'gpiochip600');
  });

  test('expanders-only: chips but no main controller, and why', async () => {
    const scan = await scanHardware(fixture('expanders-only'));
    assert.equal(scan.mainChip, undefined);
    assert.match(scan.mainChipProblem ?? '', /no Raspberry Pi GPIO controller found/);
  });
});

describe('the listing', () => {
  test('probes numbered with their reading or why there is none; the main chip marked', async () => {
    const lines = formatScan(await scanHardware(fixture('pi5-two-ds18b20'), { nowMs: () => 0 }));
    assert.match(lines[0]!, /^1-Wire: 2 DS18B20 under .*pi5-two-ds18b20\/bus\/w1\/devices$/);
    assert.equal(lines[1], '  1) 28-0316a2795bff  21.625 °C');
    assert.match(lines[2]!, /^ {2}2\) 28-3c01d607d4a1 {2}no reading: .*CRC error/);
    assert.match(lines[3]!, /^GPIO: 5 chip\(s\) under /);
    assert.equal(
      lines.at(-1),
      '  gpiochip571 "pinctrl-rp1" base 571 (54 lines), the main controller: GPIO n is sysfs 571+n',
    );
  });

  const missing: [tree: string, patterns: RegExp[]][] = [
    ['no-chips', [/^1-Wire: not enabled .*dtoverlay=w1-gpio/, /^GPIO: no chips under /]],
    ['w1-bus-empty', [/^1-Wire: no DS18B20 under .*check the wiring/, /^GPIO: no chips/]],
    [
      'expanders-only',
      [/^1-Wire: not enabled/, /^GPIO: 1 chip/, /gpiochip500/, /no Raspberry Pi GPIO controller/],
    ],
  ];
  for (const [tree, patterns] of missing) {
    test(`${tree}: says what was not found and what to do`, async () => {
      const lines = formatScan(await scanHardware(fixture(tree)));
      assert.equal(lines.length, patterns.length, lines.join('\n'));
      patterns.forEach((pattern, i) => {
        assert.match(lines[i]!, pattern);
      });
    });
  }
});
