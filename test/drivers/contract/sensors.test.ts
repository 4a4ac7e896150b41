/**
 * Every sensor driver against the one contract (sensor-contract.ts), each on its fake
 * device: simulated plant, fake MQTT transport, a DS18B20 sysfs tree in a temp dir, fake GPIO
 * ports on a fixture sysfs, a number in a file.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Ds18b20Sensor } from '../../../src/drivers/ds18b20.js';
import { FileValueSensor } from '../../../src/drivers/file-value.js';
import { GpioInput } from '../../../src/drivers/gpio/input.js';
import { GpioPulseRate } from '../../../src/drivers/gpio/pulse-rate.js';
import { binaryPreset } from '../../../src/drivers/mqtt/binary-payload.js';
import { MqttBinarySensor } from '../../../src/drivers/mqtt/binary-sensor.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { SimSensor } from '../../../src/drivers/sim/sensor.js';
import { errnoError } from '../../support/assert.js';
import { tempTree, writeTree } from '../../support/tmp.js';
import { fakeFactory, pi4Sysfs } from '../gpio/fakes.js';
import { SENSOR_TOPIC, topicSensor } from '../mqtt/devices.js';
import { FakeTransport, manualTime } from '../mqtt/fake-transport.js';
import { sensorContract } from './sensor-contract.js';

const START_MS = 1_700_000_000_000;

sensorContract({
  name: 'SimSensor on a simulated plant',
  readAfterStop: 'reads',
  make: () => {
    const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100 }, START_MS);
    const driver = new SimSensor({ id: 't', plant, nowMs: () => START_MS });
    return {
      driver,
      provide: () => 20,
      fail: () => driver.injectFault({ kind: 'error', message: 'simulated failure' }),
      released: () => true,
    };
  },
});

sensorContract({
  name: 'MqttBinarySensor (a Zigbee2MQTT contact) on a fake transport',
  readAfterStop: 'last-value',
  cannotFail:
    'a contact reports only on change: the driver hands out its last state for the core to age, and a ' +
    'failure it can see (garbage, the device offline) reads NaN, not a rejection, so an interlock trips at ' +
    'once (test/drivers/mqtt/binary-sensor.test.ts)',
  make: () => {
    const transport = new FakeTransport();
    const driver = new MqttBinarySensor({
      id: 'window',
      transport,
      ...binaryPreset('zigbee2mqtt', 'zigbee2mqtt/window', 'contact'),
      liveness: { availabilityTopic: 'zigbee2mqtt/window/availability', maxQuietMs: 90_000_000 },
      ...manualTime(),
    });
    let open = false;
    return {
      driver,
      provide: () => {
        open = !open;
        transport.deliver('zigbee2mqtt/window', JSON.stringify({ contact: !open }));
        return open ? 1 : 0;
      },
      released: () =>
        transport.handlerCount('zigbee2mqtt/window') +
          transport.handlerCount('zigbee2mqtt/window/availability') ===
        0,
    };
  },
});

const TOPIC = SENSOR_TOPIC;

sensorContract({
  name: 'MqttSensor on a fake transport',
  readAfterStop: 'last-value',
  make: () => {
    const transport = new FakeTransport();
    const time = manualTime();
    const driver = topicSensor(transport, { field: 'AM2301.Temperature', ...time });
    let tempC = 20;
    return {
      driver,
      provide: () => {
        tempC += 1;
        transport.deliver(TOPIC, JSON.stringify({ AM2301: { Temperature: tempC } }));
        return tempC;
      },
      fail: () => time.advanceS(181), // the device fell silent: its value goes stale
      released: () => transport.handlerCount(TOPIC) === 0,
    };
  },
});

const ADDR = '28-0316a2795bff';
const W1_21_562 = '59 01 4b 46 7f ff 0c 10 81 : crc=81 YES\n59 01 4b 46 7f ff 0c 10 81 t=21562\n';

sensorContract({
  name: 'Ds18b20Sensor on a sysfs tree in a temp dir',
  readAfterStop: 'reads',
  make: (t) => {
    const root = tempTree(t, { 'bus/w1/devices/w1_bus_master1/w1_master_slaves': `${ADDR}\n` });
    const device = join(root, 'bus/w1/devices', ADDR);
    const driver = new Ds18b20Sensor({ id: 'tank', address: ADDR, sysfsRoot: root, nowMs: () => START_MS });
    return {
      driver,
      provide: () => {
        writeTree(device, { w1_slave: W1_21_562 });
        return 21.562;
      },
      fail: () => rmSync(device, { recursive: true }), // the sensor left the bus
      released: () => true, // it holds nothing between reads
    };
  },
});

sensorContract({
  name: 'GpioInput on a fake port',
  readAfterStop: 'rejects',
  make: () => {
    const { factory, ports } = fakeFactory();
    const driver = new GpioInput({ id: 'window', bcm: 27, sysfsRoot: pi4Sysfs(), portFactory: factory });
    return {
      driver,
      provide: () => {
        ports[0]!.level = 1;
        return 1;
      },
      fail: () => {
        ports[0]!.readError = errnoError('EIO', 'EIO: i/o error, read');
      },
      released: () => ports.every((port) => port.unexported),
    };
  },
});

sensorContract({
  name: 'GpioPulseRate on a fake port',
  readAfterStop: 'rejects',
  cannotFail: 'a pulse counter cannot tell a dead meter from no flow: 0 pulses is a valid rate',
  make: () => {
    let nowMs = START_MS;
    const { factory, ports } = fakeFactory();
    const driver = new GpioPulseRate({
      id: 'flow',
      bcm: 22,
      windowS: 60,
      sysfsRoot: pi4Sysfs(),
      portFactory: factory,
      nowMs: () => nowMs,
    });
    return {
      driver,
      provide: () => {
        // Three pulses in the first minute, read at its end: 3 pulses/min.
        for (const atS of [10, 20, 30]) {
          nowMs = START_MS + atS * 1000;
          ports[0]!.edge(1);
        }
        nowMs = START_MS + 60_000;
        return 3;
      },
      released: () => ports.every((port) => port.unexported),
    };
  },
});

sensorContract({
  name: 'FileValueSensor on a file in a temp dir',
  readAfterStop: 'reads',
  make: (t) => {
    const root = tempTree(t, {});
    const path = join(root, 'temp');
    const driver = new FileValueSensor({ id: 'soc', path, scale: 0.001 });
    return {
      driver,
      provide: () => {
        writeTree(root, { temp: '45123\n' });
        return 45.123;
      },
      fail: () => rmSync(path, { force: true }), // the device went away
      released: () => true, // it holds nothing between reads
    };
  },
});
