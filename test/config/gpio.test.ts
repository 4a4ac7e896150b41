import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { safeLevelOf, toLoopSpec } from '../../src/config/to-loop-spec.js';
import { configErrors, validConfig } from '../support/config.js';
import { type ConfigErrorCase, testConfigErrorCases } from '../support/config-cases.js';

/**
 * A greenhouse on a Pi: a DS18B20, a window switch, a flow meter, a relay heater. Each part is
 * a YAML flow mapping the cases may replace.
 */
function configText(
  parts: {
    gpio?: string;
    probe?: string;
    window?: string;
    flow?: string;
    heater?: string;
    loop?: string;
  } = {},
) {
  return `
version: 1
node: { id: pi }
${parts.gpio ?? ''}
sensors:
  probe: ${parts.probe ?? '{ kind: ds18b20 }'}
  window: ${parts.window ?? '{ kind: gpio_input, bcm: 27 }'}
  flow: ${parts.flow ?? '{ kind: pulse_rate, bcm: 22 }'}
actuators:
  heater: ${parts.heater ?? '{ kind: gpio_relay, bcm: 17 }'}
loops:
  greenhouse: { sensor: probe, raise: heater, setpoint: 12, limits: { min: 5, max: 30 }, controller: ${parts.loop ?? '{ type: hysteresis }'} }
`;
}

const valid = validConfig;
const errors = configErrors;

describe('gpio block', () => {
  test('absent: resolved like an empty block (sysfsRoot /sys, the chip detected)', () => {
    assert.deepEqual(valid(configText()).gpio, { sysfsRoot: '/sys' });
  });

  test('given: sysfsRoot defaults to /sys, chipLabel and base stay absent unless written', () => {
    assert.deepEqual(valid(configText({ gpio: 'gpio: {}' })).gpio, { sysfsRoot: '/sys' });
    assert.deepEqual(
      valid(configText({ gpio: 'gpio: { sysfsRoot: /tmp/sys, chipLabel: pinctrl-rp1, base: 571 }' })).gpio,
      { sysfsRoot: '/tmp/sys', chipLabel: 'pinctrl-rp1', base: 571 },
    );
  });
});

describe('GPIO sensor and actuator defaults', () => {
  const config = valid(configText());

  test('ds18b20: periodS 10, stale after 30 s, maxRatePerS 1, address and plausible absent', () => {
    assert.deepEqual(config.sensors.probe, { kind: 'ds18b20', periodS: 10, staleAfterS: 30, maxRatePerS: 1 });
  });

  test('gpio_input: active high, debounce 20 ms', () => {
    assert.deepEqual(config.sensors.window, {
      kind: 'gpio_input',
      bcm: 27,
      activeLow: false,
      debounceS: 0.02,
      periodS: 10,
      staleAfterS: 30,
    });
  });

  test('pulse_rate: active high, rising edge, 60 s window, factor 1 (pulses/min)', () => {
    assert.deepEqual(config.sensors.flow, {
      kind: 'pulse_rate',
      bcm: 22,
      activeLow: false,
      edge: 'rising',
      windowS: 60,
      factor: 1,
      periodS: 10,
      staleAfterS: 30,
    });
  });

  test('gpio_relay: active low (most relay boards), relay settings default like simulated_relay', () => {
    assert.deepEqual(config.actuators.heater, {
      kind: 'gpio_relay',
      bcm: 17,
      activeLow: true,
      minOnS: 0,
      minOffS: 0,
      windowS: 600,
      modulation: 'band',
      modulationDefaulted: true,
      band: 0.25,
      safeState: 'off',
    });
  });
});

describe('gpio_relay in the loop spec', () => {
  test('time-proportioned like every relay, safe level from safeState', () => {
    const config = valid(
      configText({
        heater: '{ kind: gpio_relay, bcm: 17, minOnS: 60, minOffS: 120, windowS: 300, safeState: on }',
      }),
    );
    assert.deepEqual(toLoopSpec(config, 'greenhouse').raise, {
      id: 'heater',
      kind: 'relay',
      safeLevel: 1,
      timeProportioning: { windowMs: 300_000, minOnMs: 60_000, minOffMs: 120_000 },
    });
    assert.equal(safeLevelOf(config.actuators.heater!), 1);
  });

  test('band modulation: half band kp·band', () => {
    const band = '{ kind: gpio_relay, bcm: 17, modulation: band, band: 0.5 }';
    const config = valid(configText({ heater: band, loop: '{ type: pid, kp: 0.4 }' }));
    assert.deepEqual(toLoopSpec(config, 'greenhouse').raise?.band, { halfBand: 0.2 });
  });

  test('band modulation: half band kp·bandC, and the band check applies', () => {
    const band = '{ kind: gpio_relay, bcm: 17, modulation: band, bandC: 0.5 }';
    const config = valid(configText({ heater: band, loop: '{ type: pid, kp: 0.4 }' }));
    assert.deepEqual(toLoopSpec(config, 'greenhouse').raise?.band, { halfBand: 0.2 });
    assert.deepEqual(errors(configText({ heater: band })), [
      'actuators.heater.modulation: modulation "band" needs a pid controller, but loops.greenhouse uses hysteresis (use modulation "window" or a pid controller)',
    ]);
  });
});

describe('gpio_input debounceS, and its old name debounceMs', () => {
  const debounceOf = (window: string) => {
    const loaded = parseConfigText(configText({ window }));
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
    const sensor = loaded.config.sensors.window;
    return { debounceS: sensor?.kind === 'gpio_input' && sensor.debounceS, warnings: loaded.warnings };
  };

  test('debounceS is seconds and may be fractional; no warning', () => {
    assert.deepEqual(debounceOf('{ kind: gpio_input, bcm: 27, debounceS: 0.005 }'), {
      debounceS: 0.005,
      warnings: [],
    });
  });

  test('debounceMs is still read, as debounceMs / 1000, with a deprecation warning', () => {
    assert.deepEqual(debounceOf('{ kind: gpio_input, bcm: 27, debounceMs: 200 }'), {
      debounceS: 0.2,
      warnings: [
        'sensors.window.debounceMs: renamed debounceS (in seconds): write debounceS: 0.2 (deprecated)',
      ],
    });
  });
});

describe('GPIO config errors', () => {
  // [what, config text, expected `path: message` lines (every one must be reported)]
  const cases: ConfigErrorCase[] = [
    [
      'a pin used by a sensor and a relay',
      configText({ heater: '{ kind: gpio_relay, bcm: 27 }' }),
      ['actuators.heater.bcm: pin 27 is also used by sensors.window'],
    ],
    [
      'a pin used by two sensors',
      configText({ flow: '{ kind: pulse_rate, bcm: 27 }' }),
      ['sensors.flow.bcm: pin 27 is also used by sensors.window'],
    ],
    [
      'bcm above 53',
      configText({ heater: '{ kind: gpio_relay, bcm: 54 }' }),
      ['actuators.heater.bcm: must be <= 53 (got 54)'],
    ],
    [
      'negative bcm',
      configText({ window: '{ kind: gpio_input, bcm: -1 }' }),
      ['sensors.window.bcm: must be >= 0 (got -1)'],
    ],
    [
      'fractional bcm',
      configText({ window: '{ kind: gpio_input, bcm: 2.5 }' }),
      ['sensors.window.bcm: expected an integer, got 2.5'],
    ],
    ['bcm missing', configText({ window: '{ kind: gpio_input }' }), ['sensors.window.bcm: required']],
    [
      'a header pin name instead of a BCM number',
      configText({ window: '{ kind: gpio_input, bcm: GPIO27 }' }),
      ['sensors.window.bcm: expected a number, got "GPIO27"'],
    ],
    [
      'a DS18B20 address that is not a 1-Wire address',
      configText({ probe: '{ kind: ds18b20, address: 10-0316a2795bff }' }),
      ['sensors.probe.address: use the 1-Wire address, e.g. 28-0316a2795bff'],
    ],
    [
      'ds18b20 plausible range inverted',
      configText({ probe: '{ kind: ds18b20, plausible: { min: 50, max: 0 } }' }),
      ['sensors.probe.plausible.min: must be less than plausible.max'],
    ],
    [
      'ds18b20 maxRatePerS 0',
      configText({ probe: '{ kind: ds18b20, maxRatePerS: 0 }' }),
      ['sensors.probe.maxRatePerS: must be > 0 (got 0)'],
    ],
    [
      'negative debounce',
      configText({ window: '{ kind: gpio_input, bcm: 27, debounceMs: -5 }' }),
      ['sensors.window.debounceMs: must be >= 0 (got -5)'],
    ],
    [
      'negative debounceS',
      configText({ window: '{ kind: gpio_input, bcm: 27, debounceS: -0.005 }' }),
      ['sensors.window.debounceS: must be >= 0 (got -0.005)'],
    ],
    [
      'debounce under both names',
      configText({ window: '{ kind: gpio_input, bcm: 27, debounceS: 0.02, debounceMs: 20 }' }),
      [
        'sensors.window.debounceMs: both debounceMs and debounceS are set: debounceMs is the deprecated name of debounceS; keep only debounceS',
      ],
    ],
    [
      'pulse edge both (one pulse would count twice)',
      configText({ flow: '{ kind: pulse_rate, bcm: 22, edge: both }' }),
      ['sensors.flow.edge: must be one of "rising", "falling" (got "both")'],
    ],
    [
      'pulse factor 0',
      configText({ flow: '{ kind: pulse_rate, bcm: 22, factor: 0 }' }),
      ['sensors.flow.factor: must be > 0 (got 0)'],
    ],
    [
      'a relay key on an input',
      configText({ window: '{ kind: gpio_input, bcm: 27, safeState: on }' }),
      [
        'sensors.window.safeState: unknown key (allowed: kind, bcm, activeLow, debounceS, periodS, staleAfterS)',
      ],
    ],
    [
      'gpio base negative',
      configText({ gpio: 'gpio: { base: -512 }' }),
      ['gpio.base: must be >= 0 (got -512)'],
    ],
    [
      'gpio typo',
      configText({ gpio: 'gpio: { chip: pinctrl-rp1 }' }),
      ['gpio.chip: unknown key (allowed: sysfsRoot, chipLabel, base)'],
    ],
  ];
  testConfigErrorCases(cases);
});
