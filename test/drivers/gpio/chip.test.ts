import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveGpio } from '../../../src/drivers/gpio/chip.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/sys/${name}`, import.meta.url));

describe('resolveGpio: BCM number → sysfs number', () => {
  const cases = [
    { tree: 'pi3-legacy', bcm: 17, sysfsNumber: 17, chip: 'pinctrl-bcm2835', base: 0 },
    { tree: 'pi4-bookworm', bcm: 17, sysfsNumber: 529, chip: 'pinctrl-bcm2711', base: 512 },
    { tree: 'pi4-bookworm', bcm: 57, sysfsNumber: 569, chip: 'pinctrl-bcm2711', base: 512 },
    // The Pi 5's brcmstb banks have lower bases than RP1: "lowest gpiochip" would be wrong.
    { tree: 'pi5-bookworm', bcm: 17, sysfsNumber: 588, chip: 'pinctrl-rp1', base: 571 },
    { tree: 'pi5-bookworm', bcm: 0, sysfsNumber: 571, chip: 'pinctrl-rp1', base: 571 },
    // Unknown label: the lowest-based chip with >= 54 lines, not the 16-line expander at 500.
    { tree: 'unknown-soc', bcm: 4, sysfsNumber: 604, chip: 'pinctrl-future', base: 600 },
  ];
  for (const c of cases) {
    test(`${c.tree}: BCM ${c.bcm} is sysfs ${c.sysfsNumber} on ${c.chip}`, async () => {
      const resolved = await resolveGpio(c.bcm, { sysfsRoot: fixture(c.tree) });
      assert.deepEqual(resolved, { sysfsNumber: c.sysfsNumber, chip: c.chip, base: c.base });
    });
  }

  test('an explicit base wins and sysfs is not read', async () => {
    const resolved = await resolveGpio(17, { sysfsRoot: '/nonexistent', override: { base: 400 } });
    assert.deepEqual(resolved, { sysfsNumber: 417, chip: 'override', base: 400 });
  });

  test('an explicit chip label wins over the known labels', async () => {
    const resolved = await resolveGpio(3, {
      sysfsRoot: fixture('pi4-bookworm'),
      override: { chipLabel: 'raspberrypi-exp-gpio' },
    });
    assert.deepEqual(resolved, { sysfsNumber: 573, chip: 'raspberrypi-exp-gpio', base: 570 });
  });

  const errors = [
    {
      what: 'no gpiochip',
      tree: 'no-chips',
      bcm: 17,
      message: /no GPIO chips under .*class\/gpio: is this a Raspberry Pi with sysfs GPIO\?/,
    },
    { what: 'no class/gpio at all', tree: 'absent', bcm: 17, message: /no GPIO chips under/ },
    {
      what: 'only small chips',
      tree: 'expanders-only',
      bcm: 17,
      message: /no Raspberry Pi GPIO controller found .*some-expander/,
    },
    {
      what: 'BCM beyond the chip',
      tree: 'pi5-bookworm',
      bcm: 54,
      message: /GPIO 54: out of range, pinctrl-rp1 has GPIO 0\.\.53/,
    },
    { what: 'negative BCM', tree: 'pi4-bookworm', bcm: -1, message: /integer >= 0/ },
    { what: 'fractional BCM', tree: 'pi4-bookworm', bcm: 1.5, message: /integer >= 0/ },
  ];
  for (const e of errors) {
    test(`error: ${e.what}`, async () => {
      await assert.rejects(resolveGpio(e.bcm, { sysfsRoot: fixture(e.tree) }), e.message);
    });
  }

  test('error: an override label that is not present names the chips that are', async () => {
    await assert.rejects(
      resolveGpio(1, { sysfsRoot: fixture('pi4-bookworm'), override: { chipLabel: 'pinctrl-rp1' } }),
      /no GPIO chip labelled "pinctrl-rp1"; present: gpiochip512 "pinctrl-bcm2711" \(58 lines\)/,
    );
  });
});
