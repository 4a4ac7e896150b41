/**
 * Wall-clock steps of ±2 h (NTP correcting a Raspberry Pi without a real-time clock, `date -s`)
 * while the daemon regulates, in two worlds:
 * - a manual clock driving simulated sensors, relays and plant (`ManualClock.stepWall`);
 * - the real-driver path: `RealClock` on injected wall and monotonic time, GPIO relays on fake
 *   pins, an MQTT sensor on a fake transport.
 * Before the fix a step forward latched a false "heating ineffective" (7,219 s of heating
 * counted) and let a relay restart inside its minimum off time; a step back made every reading
 * look stamped in the future (sensor Stale: heater off) and held minimum times for too long.
 */
import assert from 'node:assert/strict';
import { describe, type MockTimers, test } from 'node:test';
import type { LoopStatus } from '../src/core/status.js';
import type { Daemon } from '../src/daemon/daemon.js';
import type { SimSensor } from '../src/drivers/sim/sensor.js';
import { buildDrivers, type Drivers } from '../src/kinds/build.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { RealClock } from '../src/runtime/real-clock.js';
import { fakeFactory, pi4Sysfs } from './drivers/gpio/fakes.js';
import { FakeTransport } from './drivers/mqtt/fake-transport.js';
import { validConfig } from './support/config.js';
import { memoryDaemon } from './support/store.js';

const START_MS = Date.UTC(2026, 0, 1, 6);
const TICK_MS = 10_000;
const HOUR_MS = 3_600_000;
const HEATER_MIN_ON_MS = 120_000;
const COMPRESSOR_MIN_OFF_MS = 600_000;

/** Two loops on one sensor: a room heater with an effect watch, a cellar compressor with a long minimum off time. */
function configText(
  sensor: string,
  actuators: { heater: string; compressor: string },
  extra: string,
): string {
  return `
version: 1
node: { id: steps }
mqtt: { url: "mqtt://127.0.0.1:1" }
${extra}
sensors:
  t: ${sensor}
actuators:
  heater: ${actuators.heater}
  compressor: ${actuators.compressor}
loops:
  room:
    sensor: t
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    effectWatch: { periodS: 3600, minChange: 0.5 }
    controller: { type: hysteresis }
  cellar:
    sensor: t
    lower: compressor
    mode: cool
    setpoint: 18
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
`;
}

const TIMING = `minOnS: ${HEATER_MIN_ON_MS / 1000}, minOffS: 60`;
const COMPRESSOR_TIMING = `minOnS: 180, minOffS: ${COMPRESSOR_MIN_OFF_MS / 1000}`;

/** The heater and the compressor as simulated relays on a cold room (the last two configText arguments). */
const SIMULATED_RELAYS = [
  {
    heater: `{ kind: simulated_relay, plant: room, gain: 20, ${TIMING} }`,
    compressor: `{ kind: simulated_relay, plant: room, gain: -20, ${COMPRESSOR_TIMING} }`,
  },
  'simulation: { plants: { room: { kind: thermal, ambient: 10, timeConstantS: 3600 } } }',
] as const;

/** What a scenario needs from a world: move time, step the wall, set the reading, see the relays. */
interface World {
  daemon: Daemon;
  statuses: Array<{ monoMs: number; status: LoopStatus }>;
  /** Monotonic time since the start, ms. */
  monoMs(): number;
  tick(): Promise<void>;
  stepWall(deltaMs: number): void;
  setReading(value: number): void;
  level(actuator: 'heater' | 'compressor'): Promise<number | undefined>;
}

async function simulatedWorld(): Promise<World> {
  const clock = new ManualClock(START_MS);
  const config = validConfig(
    configText('{ kind: simulated, plant: room, periodS: 10 }', ...SIMULATED_RELAYS),
  );
  const drivers = buildDrivers(config, clock);
  let monoMs = 0;
  const statuses: World['statuses'] = [];
  const daemon = memoryDaemon(config, drivers, clock);
  daemon.subscribe({ status: (status) => statuses.push({ monoMs, status }) });
  const sensor = drivers.sensors.get('t') as SimSensor;
  // The reading is held where the test puts it (a probe out of the water): only the relays move.
  sensor.injectFault({ kind: 'spike', value: 12 });
  await daemon.start();
  return {
    daemon,
    statuses,
    monoMs: () => monoMs,
    tick: async () => {
      monoMs += TICK_MS;
      await clock.advance(TICK_MS);
    },
    stepWall: (deltaMs) => clock.stepWall(deltaMs),
    setReading: (value) => sensor.injectFault({ kind: 'spike', value }),
    level: (id) => drivers.actuators.get(id)!.observe(),
  };
}

/**
 * `timers`: node:test's mock timers (setTimeout only), moved with the injected monotonic time,
 * so the RealClock's timers (runner wake-ups, sensor periods) fire as they would on a Pi.
 */
async function realDriverWorld(timers: MockTimers): Promise<World> {
  timers.enable({ apis: ['setTimeout'] });
  const time = { wallMs: START_MS, monoMs: 1_000 };
  const clock = new RealClock({ wallMs: () => time.wallMs, monotonicMs: () => time.monoMs });
  const transport = new FakeTransport();
  const { factory, ports } = fakeFactory();
  const config = validConfig(
    configText(
      '{ kind: mqtt, topic: th/t, periodS: 60 }',
      {
        heater: `{ kind: gpio_relay, bcm: 17, ${TIMING} }`,
        compressor: `{ kind: gpio_relay, bcm: 27, ${COMPRESSOR_TIMING} }`,
      },
      `gpio: { sysfsRoot: "${pi4Sysfs()}" }`,
    ),
  );
  const drivers: Drivers = buildDrivers(config, clock, {
    mqtt: transport,
    gpio: { portFactory: factory },
  });
  let monoMs = 0;
  let reading = 12;
  const statuses: World['statuses'] = [];
  const daemon = memoryDaemon(config, drivers, clock);
  daemon.subscribe({ status: (status) => statuses.push({ monoMs, status }) });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  /** Time passes: both clocks and the timers, a second at a time, letting cycles finish. */
  const pass = async (ms: number) => {
    for (let done = 0; done < ms; done += 1_000) {
      time.monoMs += 1_000;
      time.wallMs += 1_000;
      timers.tick(1_000);
      await settle();
    }
  };
  await daemon.start();
  transport.deliver('th/t', String(reading));
  await pass(0);
  await settle();
  const portOf = (bcm: number) => ports.find((p) => p.sysfsNumber === 512 + bcm)!;
  return {
    daemon,
    statuses,
    monoMs: () => monoMs,
    tick: async () => {
      monoMs += TICK_MS;
      await pass(TICK_MS);
      // The device publishes every 10 s; each message triggers the loops.
      transport.deliver('th/t', String(reading));
      await settle();
    },
    stepWall: (deltaMs) => {
      time.wallMs += deltaMs;
    },
    setReading: (value) => {
      reading = value;
    },
    level: async (id) => portOf(id === 'heater' ? 17 : 27).level,
  };
}

async function ticksFor(world: World, ms: number, each?: () => Promise<void>): Promise<void> {
  for (let t = 0; t < ms; t += TICK_MS) {
    await world.tick();
    await each?.();
  }
}

/** Monotonic time of the first tick (within `limitMs`) at which `actuator` reads `level`. */
async function whenLevel(world: World, actuator: 'heater' | 'compressor', level: number, limitMs: number) {
  for (let t = 0; t <= limitMs; t += TICK_MS) {
    if ((await world.level(actuator)) === level) return world.monoMs();
    await world.tick();
  }
  assert.fail(`${actuator} never reached ${level} within ${limitMs / 1000} s`);
}

function condition(status: LoopStatus, type: string) {
  return status.conditions.find((c) => c.type === type);
}

async function scenario(world: World, stepMs: number): Promise<void> {
  // Given a cold room (12 °C for a 20 °C setpoint) heated at full output for 10 minutes …
  await ticksFor(world, 10 * 60_000);
  assert.equal(await world.level('heater'), 1, `heating: ${JSON.stringify(world.daemon.statuses())}`);
  assert.equal(await world.level('compressor'), 0);

  // … when the wall clock steps, then for the next 30 minutes the heater keeps running, no fault
  // latches and no reading is judged stale or stamped in the future.
  const stepAtMono = world.monoMs();
  world.stepWall(stepMs);
  await ticksFor(world, 30 * 60_000, async () => {
    assert.equal(
      await world.level('heater'),
      1,
      `heater still on ${(world.monoMs() - stepAtMono) / 1000} s after the step`,
    );
  });
  for (const { monoMs, status } of world.statuses.filter((s) => s.monoMs >= stepAtMono)) {
    const at = `${status.loop} at +${(monoMs - stepAtMono) / 1000} s`;
    assert.equal(
      condition(status, 'SensorHealthy')?.status,
      'True',
      `${at}: ${condition(status, 'SensorHealthy')?.message}`,
    );
    assert.doesNotMatch(condition(status, 'Faulted')?.reason ?? '', /HeatingIneffective/, at);
  }

  // The effect watch still measures real time: 60 minutes of heating without effect latch.
  await ticksFor(world, 25 * 60_000);
  const room = world.daemon.statuses().find((s) => s.loop === 'room')!;
  assert.match(condition(room, 'Faulted')?.reason ?? '', /HeatingIneffective/, 'latched after a real hour');
  assert.equal(await world.level('heater'), 0, 'latched: heater safe');

  // Minimum times across a step. Warm (25 °C): the cellar compressor runs; cold again: it stops.
  world.setReading(25);
  const compressorOnAt = await whenLevel(world, 'compressor', 1, 60_000);
  await ticksFor(world, 5 * 60_000);
  world.setReading(12);
  const compressorOffAt = await whenLevel(world, 'compressor', 0, 60_000);
  assert.ok(compressorOffAt - compressorOnAt >= 180_000);
  await ticksFor(world, 60_000);
  world.stepWall(stepMs);
  world.setReading(25);
  const restartAt = await whenLevel(world, 'compressor', 1, 15 * 60_000);
  const offForMs = restartAt - compressorOffAt;
  assert.ok(
    offForMs >= COMPRESSOR_MIN_OFF_MS,
    `compressor restarted after ${offForMs / 1000} s off (minimum 600 s)`,
  );
  assert.ok(
    offForMs <= COMPRESSOR_MIN_OFF_MS + 2 * TICK_MS,
    `held off ${offForMs / 1000} s, not the minimum`,
  );
}

describe('wall-clock steps while regulating', () => {
  const worlds: Array<[name: string, make: (timers: MockTimers) => Promise<World>]> = [
    ['manual clock, simulated plant', simulatedWorld],
    ['real-driver path (RealClock on injected time, GPIO relays, MQTT sensor)', realDriverWorld],
  ];
  for (const [name, make] of worlds) {
    for (const stepMs of [2 * HOUR_MS, -2 * HOUR_MS]) {
      test(`${name}: a step ${stepMs > 0 ? 'forward' : 'back'} of 2 h latches no false fault, keeps readings fresh and minimum times exact`, async (t) => {
        const world = await make(t.mock.timers);
        try {
          await scenario(world, stepMs);
        } finally {
          await world.daemon.stop();
        }
      });
    }
  }
});

describe('a step forward does not delay what triggers a cycle', () => {
  test('given a running heater and a wall clock just stepped 2 h forward, when the sensor reports NaN, then the heater is off before the clock moves', async () => {
    const clock = new ManualClock(START_MS);
    const transport = new FakeTransport();
    const config = validConfig(configText('{ kind: mqtt, topic: th/t, periodS: 60 }', ...SIMULATED_RELAYS));
    const drivers = buildDrivers(config, clock, { mqtt: transport });
    const daemon = memoryDaemon(config, drivers, clock);
    await daemon.start();
    for (let t = 0; t < 18; t++) {
      transport.deliver('th/t', '12');
      await clock.advance(TICK_MS);
    }
    assert.equal(await drivers.actuators.get('heater')!.observe(), 1, 'heating');
    clock.stepWall(2 * HOUR_MS);
    await clock.advance(1_000);
    transport.deliver('th/t', 'nan');
    await clock.advance(0);
    assert.equal(await drivers.actuators.get('heater')!.observe(), 0, 'safe at once, not at the next resync');
    await daemon.stop();
  });
});
