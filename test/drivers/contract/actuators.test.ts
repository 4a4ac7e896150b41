/**
 * Every actuator driver against the one contract (actuator-contract.ts), each on its fake
 * device: simulated plant, fake GPIO port on a fixture sysfs, fake MQTT transport.
 */
import { GpioRelay } from '../../../src/drivers/gpio/relay.js';
import type { MqttLevel, MqttSwitch } from '../../../src/drivers/mqtt/actuator.js';
import { SimContinuous, SimRelay } from '../../../src/drivers/sim/actuator.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { fakeFactory, pi4Sysfs } from '../gpio/fakes.js';
import { DIMMER_TOPICS, PLUG_TOPICS, tasmotaDimmer, tasmotaSwitch } from '../mqtt/devices.js';
import { FakeTransport } from '../mqtt/fake-transport.js';
import { pwmTree, recordedPwm } from '../pwm-fixture.js';
import { type ActuatorHarness, actuatorContract } from './actuator-contract.js';

const START_MS = 1_700_000_000_000;

/** A simulated actuator whose "physical commands" are the plant input writes it makes. */
function simHarness(build: (plant: FopdtPlant) => SimRelay | SimContinuous): ActuatorHarness {
  const plant = new FopdtPlant({ ambient: 20, timeConstantS: 100 }, START_MS);
  const inputWrites: number[] = [];
  const setInput = plant.setInput.bind(plant);
  plant.setInput = (name, level, atMs) => {
    inputWrites.push(level);
    setInput(name, level, atMs);
  };
  const driver = build(plant);
  // The simulated world keeps running: a stopped driver takes nothing to give back.
  return { driver, confirm: () => {}, commands: () => [...inputWrites], released: () => true };
}

actuatorContract({
  name: 'SimRelay on a simulated plant',
  kind: 'relay',
  make: () => simHarness((plant) => new SimRelay({ id: 'heater', plant, gain: 10, nowMs: () => START_MS })),
});

actuatorContract({
  name: 'SimContinuous on a simulated plant',
  kind: 'continuous',
  make: () => simHarness((plant) => new SimContinuous({ id: 'fan', plant, gain: -5, nowMs: () => START_MS })),
});

for (const unexportOnStop of [false, true]) {
  actuatorContract({
    name: `GpioRelay on a fake port (unexportOnStop ${unexportOnStop})`,
    kind: 'relay',
    make: () => {
      const { factory, ports } = fakeFactory();
      const driver = new GpioRelay({
        id: 'heater',
        bcm: 17,
        activeLow: true,
        sysfsRoot: pi4Sysfs(),
        portFactory: factory,
        unexportOnStop,
      });
      return {
        driver,
        confirm: () => {},
        commands: () => ports.flatMap((port) => port.writes),
        // Without unexportOnStop the export is kept on purpose (the next start adopts the pin
        // at its level); the driver still drops its handle: it no longer reads the pin.
        released: async () =>
          unexportOnStop ? ports.every((port) => port.unexported) : (await driver.observe()) === undefined,
      };
    },
  });
}

actuatorContract({
  name: 'PwmOutput on a fixture pwmchip0 (its export played by a watcher)',
  kind: 'continuous',
  make: (t) => {
    const { root } = pwmTree(t);
    const { driver, writes } = recordedPwm(root);
    return {
      driver,
      // observe() reads duty_cycle, period and enable back from the files.
      confirm: () => {},
      // One duty_cycle write per command (enable follows it); start's configuration is not one.
      commands: () => writes.filter(([name]) => name === 'duty_cycle').slice(1),
      released: async () => (await driver.observe()) === undefined,
    };
  },
});

/** An MQTT actuator's harness: commands are the publishes on its command topic. */
function mqttHarness(
  transport: FakeTransport,
  driver: MqttSwitch | MqttLevel,
  topics: { readonly command: string; readonly state: string },
  statePayload: (level: number) => string,
): ActuatorHarness {
  return {
    driver,
    confirm: (level) => transport.deliver(topics.state, statePayload(level)),
    commands: () => transport.published.filter((p) => p.topic === topics.command),
    released: () => transport.handlerCount(topics.state) === 0,
  };
}

const mqttActuators = [
  {
    name: 'MqttSwitch (Tasmota plug)',
    kind: 'relay',
    build: tasmotaSwitch,
    topics: PLUG_TOPICS,
    statePayload: (level: number) => (level === 1 ? 'ON' : 'OFF'),
  },
  {
    name: 'MqttLevel (dimmer, percent)',
    kind: 'continuous',
    build: tasmotaDimmer,
    topics: DIMMER_TOPICS,
    statePayload: (level: number) => JSON.stringify({ Dimmer: Math.round(level * 100) }),
  },
] as const;

for (const m of mqttActuators) {
  actuatorContract({
    name: `${m.name} on a fake transport`,
    kind: m.kind,
    make: () => {
      const transport = new FakeTransport();
      return mqttHarness(transport, m.build(transport), m.topics, m.statePayload);
    },
  });
}
