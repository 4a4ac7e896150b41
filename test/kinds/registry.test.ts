import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { z } from 'zod';
import { parseConfigText } from '../../src/config/load.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { relayFields, sensorCommon } from '../../src/kinds/fields.js';
import {
  ACTUATOR_KINDS,
  actuatorSchema,
  gpioPinOf,
  isRelay,
  SENSOR_KINDS,
  sensorSchema,
  usesMqtt,
} from '../../src/kinds/registry.js';

/** The field names of a kind's object schema. */
const fieldsOf = (schema: unknown) => Object.keys((schema as z.ZodObject).shape);

describe('the kinds registry', () => {
  test('lists the sensor kinds in schema order, new kinds after the first five', () => {
    assert.deepEqual(SENSOR_KINDS.map((k) => k.kind).slice(0, 5), [
      'simulated',
      'mqtt',
      'ds18b20',
      'gpio_input',
      'pulse_rate',
    ]);
    assert.ok(SENSOR_KINDS.some((k) => k.kind === 'file_value'));
  });

  test('lists the actuator kinds in schema order', () => {
    assert.deepEqual(
      ACTUATOR_KINDS.map((k) => k.kind),
      ['simulated_relay', 'simulated_continuous', 'mqtt_switch', 'mqtt_level', 'gpio_relay', 'pwm'],
    );
  });

  test("the unions are built from the kinds' schemas, one option per kind", () => {
    assert.equal(sensorSchema.options.length, SENSOR_KINDS.length);
    assert.equal(actuatorSchema.options.length, ACTUATOR_KINDS.length);
  });

  for (const kind of [...SENSOR_KINDS, ...ACTUATOR_KINDS]) {
    test(`${kind.kind}: its schema's kind literal is its name, and its driver fields are its own`, () => {
      const fields = fieldsOf(kind.schema);
      assert.ok(kind.schema.safeParse({ kind: 'nope' }).success === false);
      for (const field of kind.driverFields) assert.ok(fields.includes(field), `${field} is not a field`);
      assert.ok(!kind.driverFields.includes('kind' as never), 'kind is always part of the key');
    });
  }

  test("loop-level fields are no sensor driver's, except an MQTT sensor's staleAfterS", () => {
    for (const kind of SENSOR_KINDS) {
      const loopLevel = Object.keys(sensorCommon).filter(
        (f) => !(kind.kind === 'mqtt' && f === 'staleAfterS'),
      );
      for (const field of loopLevel) assert.ok(!(kind.driverFields as readonly string[]).includes(field));
    }
  });

  test("relay timing and safe state are no actuator driver's", () => {
    for (const kind of ACTUATOR_KINDS) {
      for (const field of [...Object.keys(relayFields), 'safeLevel']) {
        assert.ok(!(kind.driverFields as readonly string[]).includes(field), `${kind.kind}.${field}`);
      }
    }
  });

  test('relay kinds have every relay field; continuous kinds have a safeLevel', () => {
    for (const kind of ACTUATOR_KINDS) {
      const fields = fieldsOf(kind.schema);
      if (kind.output === 'relay') {
        for (const field of Object.keys(relayFields))
          assert.ok(fields.includes(field), `${kind.kind}.${field}`);
      } else {
        assert.ok(fields.includes('safeLevel'), kind.kind);
      }
    }
  });

  // [section, relay?, MQTT?, GPIO pin]
  const traits: [{ kind: string; bcm?: number }, boolean, boolean, number | undefined][] = [
    [{ kind: 'simulated_relay' }, true, false, undefined],
    [{ kind: 'simulated_continuous' }, false, false, undefined],
    [{ kind: 'mqtt_switch' }, true, true, undefined],
    [{ kind: 'mqtt_level' }, false, true, undefined],
    [{ kind: 'gpio_relay', bcm: 17 }, true, false, 17],
    [{ kind: 'pwm' }, false, false, undefined],
    [{ kind: 'simulated' }, false, false, undefined],
    [{ kind: 'mqtt' }, false, true, undefined],
    [{ kind: 'ds18b20' }, false, false, undefined],
    [{ kind: 'gpio_input', bcm: 22 }, false, false, 22],
    [{ kind: 'pulse_rate', bcm: 27 }, false, false, 27],
    [{ kind: 'file_value' }, false, false, undefined],
    [{ kind: 'mqtt_binary' }, false, true, undefined],
  ];
  for (const [section, relay, mqtt, pin] of traits) {
    test(`${section.kind}: relay ${relay}, MQTT ${mqtt}, pin ${pin}`, () => {
      assert.equal(isRelay(section), relay);
      assert.equal(usesMqtt(section), mqtt);
      assert.equal(gpioPinOf(section), pin);
    });
  }
});

describe("each kind's traits match the driver it builds", () => {
  // One section of every kind; the drivers are only constructed (nothing is opened or read).
  const text = `
version: 1
node: { id: pi }
mqtt: {}
gpio: { sysfsRoot: /nonexistent-sysfs }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
sensors:
  simulated: { kind: simulated, plant: p }
  mqtt: { kind: mqtt, topic: t/s }
  ds18b20: { kind: ds18b20 }
  gpio_input: { kind: gpio_input, bcm: 22 }
  pulse_rate: { kind: pulse_rate, bcm: 27 }
  file_value: { kind: file_value, path: /nonexistent-file }
  mqtt_binary: { kind: mqtt_binary, preset: zigbee2mqtt, device: zigbee2mqtt/window }
actuators:
  simulated_relay: { kind: simulated_relay, plant: p, gain: 5 }
  simulated_continuous: { kind: simulated_continuous, plant: p, gain: -5 }
  mqtt_switch: { kind: mqtt_switch, preset: tasmota, device: plug }
  mqtt_level: { kind: mqtt_level, commandTopic: c/l, stateTopic: s/l }
  gpio_relay: { kind: gpio_relay, bcm: 17 }
  pwm: { kind: pwm, frequencyHz: 25000 }
loops:
  one: { sensor: simulated, raise: simulated_relay, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;

  test('the sample has every registered kind', () => {
    const result = parseConfigText(text);
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    assert.deepEqual(
      Object.keys(result.config.sensors),
      SENSOR_KINDS.map((k) => k.kind),
    );
    assert.deepEqual(
      Object.keys(result.config.actuators),
      ACTUATOR_KINDS.map((k) => k.kind),
    );
  });

  test('simulated and relay/continuous as the descriptor says', () => {
    const result = parseConfigText(text);
    assert.ok(result.ok);
    const drivers = buildDrivers(result.config, () => 0);
    for (const kind of SENSOR_KINDS)
      assert.equal(drivers.sensors.get(kind.kind)?.simulated, kind.simulated, kind.kind);
    for (const kind of ACTUATOR_KINDS) {
      const driver = drivers.actuators.get(kind.kind);
      assert.equal(driver?.simulated, kind.simulated, kind.kind);
      assert.equal(driver?.kind, kind.output, kind.kind);
    }
  });
});
