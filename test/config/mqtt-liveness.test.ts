import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { driverKey } from '../../src/kinds/registry.js';
import { validConfig } from '../support/config.js';
import { type ConfigErrorCase, testConfigErrorCases } from '../support/config-cases.js';

/** A config whose loop reads the MQTT sensor `sensor` (a YAML flow mapping). */
function configText(sensor: string): string {
  return `
version: 1
node: { id: pi }
mqtt: {}
sensors:
  probe: ${sensor}
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  fermenter: { sensor: probe, raise: heater, setpoint: 19, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;
}

const PROBE = 'kind: mqtt, topic: zigbee2mqtt/fermenter_probe, field: temperature';

describe('mqtt sensor liveness block', () => {
  test('preset zigbee2mqtt and device: parsed as given; maxQuietS defaults in the driver, not the section', () => {
    const config = validConfig(
      configText(`{ ${PROBE}, liveness: { preset: zigbee2mqtt, device: zigbee2mqtt/fermenter_probe } }`),
    );
    const probe = config.sensors.probe;
    assert.ok(probe?.kind === 'mqtt');
    assert.deepEqual(probe.liveness, { preset: 'zigbee2mqtt', device: 'zigbee2mqtt/fermenter_probe' });
  });

  test('a change of the liveness block is a change of the driver (a reload re-creates it)', () => {
    const one = validConfig(configText(`{ ${PROBE}, liveness: { heartbeatTopic: tele/probe/STATE } }`));
    const two = validConfig(
      configText(`{ ${PROBE}, liveness: { heartbeatTopic: tele/probe/STATE, maxQuietS: 1800 } }`),
    );
    assert.notEqual(driverKey(one.sensors.probe!), driverKey(two.sensors.probe!));
  });
});

describe('mqtt sensor liveness refusals', () => {
  const cases: ConfigErrorCase[] = [
    [
      'maxQuietS not above the resolved staleAfterS (3 × periodS = 180 s)',
      configText(`{ ${PROBE}, liveness: { lastSeenField: last_seen, maxQuietS: 180 } }`),
      [
        'sensors.probe.liveness.maxQuietS: must be greater than staleAfterS (180 s): a quiet value is kept in force past staleAfterS up to maxQuietS (180 s)',
      ],
    ],
    [
      'the default maxQuietS (5400 s) below a long staleAfterS',
      configText(`{ ${PROBE}, staleAfterS: 7200, liveness: { lastSeenField: last_seen } }`),
      [
        'sensors.probe.liveness.maxQuietS: must be greater than staleAfterS (7200 s): a quiet value is kept in force past staleAfterS up to maxQuietS (5400 s)',
      ],
    ],
    [
      'a preset without its device',
      configText(`{ ${PROBE}, liveness: { preset: zigbee2mqtt } }`),
      ['sensors.probe.liveness.device: required with preset zigbee2mqtt'],
    ],
    [
      'a block that names no sign of life',
      configText(`{ ${PROBE}, liveness: { maxQuietS: 1800 } }`),
      [
        'sensors.probe.liveness.preset: give how the device shows it is alive: preset and device, availabilityTopic, heartbeatTopic or lastSeenField',
      ],
    ],
  ];
  testConfigErrorCases(cases);
});
