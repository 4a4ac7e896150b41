import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type pino from 'pino';
import { LOOP_POLICY } from '../../../src/config/to-loop-spec.js';
import { type CommandMemory, decideCommand } from '../../../src/core/command.js';
import { MqttLevel } from '../../../src/drivers/mqtt/actuator.js';
import { type DeadMan, deadManFor, switchPreset } from '../../../src/drivers/mqtt/switch-presets.js';
import type { PublishOptions } from '../../../src/drivers/mqtt/transport.js';
import { nextTurn } from '../../support/assert.js';
import { recordingLogger } from '../../support/logger.js';
import { tasmotaDimmer, tasmotaSwitch, ZIGBEE_PLUG, zigbeeSwitch } from './devices.js';
import { FakeTransport, manualTime } from './fake-transport.js';

const NO_RETAIN_QOS1 = { qos: 1, retain: false };

/** A started Tasmota plug `plug` (state stale after 600 s) on a fake transport. */
async function tasmotaPlug(opts: { logger?: pino.Logger } = {}) {
  const transport = new FakeTransport();
  const time = manualTime();
  const plug = tasmotaSwitch(transport, { ...time, ...opts });
  await plug.start();
  return { plug, transport, time, state: (payload: string) => transport.deliver('stat/plug/POWER', payload) };
}

/** A started dimmer: plain Dimmer commands, state in the field Dimmer of stat/dim/RESULT. */
async function dimmer(levelScale = 100, commandField?: string) {
  const transport = new FakeTransport();
  const time = manualTime();
  const driver = tasmotaDimmer(transport, { commandField, levelScale, ...time });
  await driver.start();
  const report = (dimmerValue: unknown) =>
    transport.deliver('stat/dim/RESULT', JSON.stringify({ POWER: 'ON', Dimmer: dimmerValue }));
  return { driver, transport, time, report };
}

describe('MqttSwitch', () => {
  test('is a real relay that subscribes to its state topic at QoS 0 on start', async () => {
    const { plug, transport } = await tasmotaPlug();
    assert.equal(plug.kind, 'relay');
    assert.equal(plug.simulated, false);
    assert.deepEqual(transport.subscriptions, [{ filter: 'stat/plug/POWER', qos: 0 }]);
  });

  test('tasmota: write(1) publishes ON and write(0) OFF on cmnd/plug/POWER, QoS 1, never retained', async () => {
    const { plug, transport } = await tasmotaPlug();
    await plug.write(1);
    await plug.write(0);
    await plug.write(1);
    assert.deepEqual(transport.published, [
      { topic: 'cmnd/plug/POWER', payload: 'ON', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/plug/POWER', payload: 'OFF', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/plug/POWER', payload: 'ON', opts: NO_RETAIN_QOS1 },
    ]);
  });

  test('zigbee2mqtt: write publishes {"state":"ON"} on <device>/set and reads the state field of <device>', async () => {
    const transport = new FakeTransport();
    const plug = zigbeeSwitch(transport);
    await plug.start();
    await plug.write(1);
    await plug.write(0);
    assert.deepEqual(transport.published, [
      { topic: 'zigbee2mqtt/heater_plug/set', payload: '{"state":"ON"}', opts: NO_RETAIN_QOS1 },
      { topic: 'zigbee2mqtt/heater_plug/set', payload: '{"state":"OFF"}', opts: NO_RETAIN_QOS1 },
    ]);
    assert.deepEqual(transport.subscriptions, [{ filter: 'zigbee2mqtt/heater_plug', qos: 0 }]);
    transport.deliver('zigbee2mqtt/heater_plug', '{"state":"ON","linkquality":90}');
    assert.equal(await plug.observe(), 1);
  });

  test('observe: unknown until a state arrives, then known, then unknown once older than stateStaleAfter', async () => {
    const { plug, time, state } = await tasmotaPlug();
    assert.equal(await plug.observe(), undefined, 'nothing reported yet');
    state('ON');
    assert.equal(await plug.observe(), 1);
    time.advanceS(300);
    state('OFF');
    assert.equal(await plug.observe(), 0, 'switched by hand: the latest report wins');
    time.advanceS(600);
    assert.equal(await plug.observe(), 0, 'exactly stateStaleAfter old is still known');
    time.advanceS(1);
    assert.equal(await plug.observe(), undefined, 'a plug that stopped reporting is unknown');
    state('OFF');
    assert.equal(await plug.observe(), 0);
  });

  test('a write does not change what is observed: only the state topic confirms', async () => {
    const { plug, state } = await tasmotaPlug();
    state('OFF');
    await plug.write(1);
    assert.equal(await plug.observe(), 0);
    state('ON');
    assert.equal(await plug.observe(), 1);
  });

  test('a state it does not understand makes the state unknown, logged once per streak', async () => {
    const { logger, lines } = recordingLogger({ level: 'warn' });
    const { plug, state } = await tasmotaPlug({ logger });
    state('ON');
    state('BLINK');
    assert.equal(await plug.observe(), undefined);
    state('???');
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!.msg,
      /heater: state on stat\/plug\/POWER not understood \(state "BLINK" is neither "ON" nor "OFF"\)/,
    );
    state('ON');
    assert.equal(await plug.observe(), 1);
    state('BLINK');
    assert.equal(lines.length, 2, 'a new streak is logged again');
  });

  test('write rejects when offline (the core retries with backoff)', async () => {
    const { plug, transport } = await tasmotaPlug();
    transport.connected = false;
    await assert.rejects(plug.write(1), /MQTT not connected/);
    assert.equal(transport.published.length, 0);
  });

  test('write rejects levels a relay does not take, without publishing', async () => {
    const { plug, transport } = await tasmotaPlug();
    for (const level of [0.5, -1, 2, Number.NaN]) await assert.rejects(plug.write(level), RangeError);
    assert.equal(transport.published.length, 0);
  });

  test('after stop, states are ignored', async () => {
    const { plug, state } = await tasmotaPlug();
    state('ON');
    await plug.stop();
    state('OFF');
    assert.equal(await plug.observe(), 1);
  });
});

describe('MqttLevel', () => {
  test('write sends round(level × levelScale), plain or as a JSON field, QoS 1, never retained', async () => {
    const plain = await dimmer();
    await plain.driver.write(0.42);
    await plain.driver.write(1);
    await plain.driver.write(0);
    assert.deepEqual(plain.transport.published, [
      { topic: 'cmnd/dim/Dimmer', payload: '42', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/dim/Dimmer', payload: '100', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/dim/Dimmer', payload: '0', opts: NO_RETAIN_QOS1 },
    ]);
    const zigbee = await dimmer(254, 'brightness');
    await zigbee.driver.write(0.5);
    assert.deepEqual(zigbee.transport.published, [
      { topic: 'cmnd/dim/Dimmer', payload: '{"brightness":127}', opts: NO_RETAIN_QOS1 },
    ]);
  });

  test('observe: unknown → the reported level / levelScale → unknown when stale', async () => {
    const { driver, time, report } = await dimmer();
    assert.equal(await driver.observe(), undefined);
    report(30);
    assert.equal(await driver.observe(), 0.3);
    time.advanceS(601);
    assert.equal(await driver.observe(), undefined);
  });

  test('a report of the value it sent is the level it was asked for (no rounding mismatch)', async () => {
    const { driver, report } = await dimmer();
    await driver.write(0.425); // sent as 43
    report(43);
    assert.equal(await driver.observe(), 0.425);
    report(44);
    assert.equal(await driver.observe(), 0.44, 'anything else is taken as reported');
  });

  test('messages without the field are ignored; out-of-range or garbage levels are unknown', async () => {
    const { driver, transport, report } = await dimmer();
    report(50);
    transport.deliver('stat/dim/RESULT', '{"POWER":"ON"}');
    assert.equal(await driver.observe(), 0.5);
    report(101);
    assert.equal(await driver.observe(), undefined);
    report(-1);
    assert.equal(await driver.observe(), undefined);
    report('dim');
    assert.equal(await driver.observe(), undefined);
  });

  test('write rejects levels outside 0..1', async () => {
    const { driver, transport } = await dimmer();
    for (const level of [-0.1, 1.1, Number.NaN]) await assert.rejects(driver.write(level), RangeError);
    assert.equal(transport.published.length, 0);
  });

  test('levelScale must be an integer >= 1', () => {
    for (const levelScale of [0, 1.5, -100]) {
      assert.throws(
        () =>
          new MqttLevel({
            id: 'x',
            transport: new FakeTransport(),
            commandTopic: 'a',
            stateTopic: 'b',
            levelScale,
            stateStaleAfterMs: 1000,
            nowMs: () => 0,
          }),
        RangeError,
      );
    }
  });
});

/** The dead man's switch a preset builds for `seconds` (the test fails if it cannot). */
function deadMan(preset: 'tasmota' | 'zigbee2mqtt', device: string, seconds: number): DeadMan {
  const built = deadManFor(preset, switchPreset(preset, device), seconds);
  assert.ok(built.ok);
  return built.deadMan;
}

/** A transport whose publishes can be made to fail while it says it is connected (no PUBACK). */
class FlakyTransport extends FakeTransport {
  failPublishes = false;
  override async publish(topic: string, payload: string | Buffer, opts: PublishOptions): Promise<void> {
    if (this.failPublishes) throw new Error(`no PUBACK for ${topic}`);
    await super.publish(topic, payload, opts);
  }
}

describe("MqttSwitch with a dead man's switch (deadManS)", () => {
  const PULSE = { topic: 'cmnd/plug/PulseTime1', payload: '700', opts: NO_RETAIN_QOS1 };
  const ON = { topic: 'cmnd/plug/POWER', payload: 'ON', opts: NO_RETAIN_QOS1 };
  const OFF = { topic: 'cmnd/plug/POWER', payload: 'OFF', opts: NO_RETAIN_QOS1 };

  function tasmotaWithDeadMan(transport = new FlakyTransport()) {
    const time = manualTime();
    const plug = tasmotaSwitch(transport, { deadMan: deadMan('tasmota', 'plug', 600), ...time });
    return { plug, transport, time };
  }

  test('tasmota: once stopped, an observe does not arm PulseTime and a write(1) sends nothing', async () => {
    const { plug, transport } = tasmotaWithDeadMan();
    transport.failPublishes = true;
    await plug.start();
    await nextTurn();
    await plug.stop();
    transport.failPublishes = false;
    await plug.observe();
    await nextTurn();
    await assert.rejects(plug.write(1), /heater: driver stopped/);
    assert.deepEqual(transport.published, []);
  });

  test('tasmota: started while connected, PulseTime1 700 (600 s) is sent once, before any command', async () => {
    const { plug, transport } = tasmotaWithDeadMan();
    await plug.start();
    await plug.observe();
    await plug.observe();
    assert.deepEqual(transport.published, [PULSE]);
  });

  test('tasmota: started offline, PulseTime is sent at the first cycle after the broker is reachable', async () => {
    const transport = new FlakyTransport();
    transport.connected = false;
    const { plug } = tasmotaWithDeadMan(transport);
    await plug.start();
    await plug.observe();
    assert.deepEqual(transport.published, []);
    transport.connected = true;
    await plug.observe();
    await plug.observe();
    assert.deepEqual(transport.published, [PULSE]);
  });

  test('tasmota: every ON is preceded by PulseTime (the setting heals after a device reset); OFF is not', async () => {
    const { plug, transport } = tasmotaWithDeadMan();
    await plug.write(1);
    await plug.write(0);
    await plug.write(1);
    assert.deepEqual(transport.published, [PULSE, ON, OFF, PULSE, ON]);
  });

  test('tasmota: when PulseTime cannot be sent, the ON is not sent either (the write fails: the core retries)', async () => {
    const { plug, transport } = tasmotaWithDeadMan();
    transport.failPublishes = true;
    await assert.rejects(plug.write(1), /no PUBACK for cmnd\/plug\/PulseTime1/);
    assert.deepEqual(transport.published, []);
  });

  test('tasmota: a PulseTime lost at start is logged once per streak and sent again at every cycle until it goes through', async () => {
    const { logger, lines } = recordingLogger({ level: 'warn' });
    const transport = new FlakyTransport();
    const plug = tasmotaSwitch(transport, { deadMan: deadMan('tasmota', 'plug', 600), logger });
    transport.failPublishes = true;
    await plug.start();
    await nextTurn();
    assert.match(
      lines[0]?.msg ?? '',
      /heater: could not arm PulseTime on cmnd\/plug\/PulseTime1 \(does the broker.s ACL allow it\?\); retrying/,
    );
    for (let cycle = 0; cycle < 3; cycle++) {
      await plug.observe();
      await nextTurn();
    }
    assert.equal(lines.length, 1, 'one warning for the whole streak');
    transport.failPublishes = false;
    await plug.observe();
    await nextTurn();
    await plug.observe();
    assert.deepEqual(transport.published, [PULSE]);
  });

  test('zigbee2mqtt: every ON carries on_time, OFF is plain; nothing else is sent', async () => {
    const transport = new FakeTransport();
    const plug = zigbeeSwitch(transport, { deadMan: deadMan('zigbee2mqtt', ZIGBEE_PLUG, 600) });
    await plug.start();
    await plug.observe();
    await plug.write(1);
    await plug.write(0);
    assert.deepEqual(
      transport.published.map((p) => [p.topic, p.payload]),
      [
        ['zigbee2mqtt/heater_plug/set', '{"state":"ON","on_time":600}'],
        ['zigbee2mqtt/heater_plug/set', '{"state":"OFF"}'],
      ],
    );
  });
});

/**
 * A Tasmota plug as its firmware behaves (support_command.ino CmndPulsetime, support_tasmota.ino
 * ExecuteCommandPower): PulseTime<n> stores the time and restarts the countdown; ON switches on
 * and restarts it; OFF clears it; at zero the relay switches off. Every change is reported on
 * stat/plug/POWER.
 */
class TasmotaPlugModel {
  relay: 0 | 1 = 0;
  pulseTimeS = 0;
  offAtMs: number | undefined;
  /** When the countdown switched the relay off. */
  readonly timedOutAtMs: number[] = [];
  lastOnAtMs = 0;

  constructor(
    private readonly transport: FakeTransport,
    private readonly nowMs: () => number,
  ) {}

  command(topic: string, payload: string): void {
    if (topic === 'cmnd/plug/PulseTime1') {
      const value = Number(payload);
      this.pulseTimeS = value > 111 ? value - 100 : value / 10;
      this.offAtMs = this.pulseTimeS > 0 ? this.nowMs() + this.pulseTimeS * 1000 : undefined;
    } else if (topic === 'cmnd/plug/POWER') {
      this.relay = payload === 'ON' ? 1 : 0;
      if (this.relay === 1) this.lastOnAtMs = this.nowMs();
      this.offAtMs =
        this.relay === 1 && this.pulseTimeS > 0 ? this.nowMs() + this.pulseTimeS * 1000 : undefined;
      this.report();
    }
  }

  /** Time passes on the device: the countdown may end. */
  tick(): void {
    if (this.offAtMs !== undefined && this.nowMs() >= this.offAtMs) {
      this.offAtMs = undefined;
      if (this.relay === 1) this.timedOutAtMs.push(this.nowMs());
      this.relay = 0;
      this.report();
    }
  }

  private report(): void {
    this.transport.deliver('stat/plug/POWER', this.relay === 1 ? 'ON' : 'OFF');
  }
}

describe('deadManS against the keep-alive: a healthy homeostat always re-arms in time, a silent one lets the plug go off', () => {
  test('given a heater wanted ON for 6 h with cycles up to 55 s late, the plug never times out; when homeostat dies, it is off 600 s after the last ON', async () => {
    const time = manualTime(0);
    const transport = new FakeTransport();
    const model = new TasmotaPlugModel(transport, time.nowMs);
    const device = Object.assign(transport, {
      publish: async (topic: string, payload: string | Buffer, opts: PublishOptions) => {
        await FakeTransport.prototype.publish.call(transport, topic, payload, opts);
        model.command(topic, payload.toString());
      },
    });
    const plug = tasmotaSwitch(device, { deadMan: deadMan('tasmota', 'plug', 600), nowMs: time.nowMs });
    await plug.start();
    const timing = { keepAliveMs: LOOP_POLICY.keepAliveMs, retryInitialMs: LOOP_POLICY.retryInitialMs };
    // The loop runs at the wake-up the core asks for, late by 0–55 s (a slow sensor, a busy Pi).
    const lateMs = [0, 55_000, 12_000, 40_000, 3_000, 55_000, 27_000];
    let memory: CommandMemory | undefined;
    let cycle = 0;
    while (time.nowMs() < 6 * 3_600_000) {
      const decision = decideCommand('heater', 1, await plug.observe(), memory, time.nowMs(), timing, {
        reason: 'regulate',
        detail: 'cold',
      });
      if (decision.command) await plug.write(decision.command.level);
      memory = decision.memory;
      const nextMs = decision.nextWakeMs + lateMs[cycle++ % lateMs.length]!;
      // The device's clock runs in 1 s steps up to the next cycle.
      while (time.nowMs() < nextMs) {
        time.advanceS(1);
        model.tick();
      }
    }
    assert.deepEqual(model.timedOutAtMs, [], 'a healthy daemon re-sent ON before PulseTime ran out');
    assert.equal(model.relay, 1);
    // homeostat dies: nobody sends anything any more.
    const lastOnMs = model.lastOnAtMs;
    while (time.nowMs() < lastOnMs + 599_000) {
      time.advanceS(1);
      model.tick();
    }
    assert.equal(model.relay, 1, 'still on 599 s after the last ON');
    time.advanceS(1);
    model.tick();
    assert.equal(model.relay, 0, 'off by itself 600 s after the last ON');
  });
});

describe('MqttSwitch and a wall-clock step', () => {
  test('given the device offline since a time, when the clock steps back 1 h, then "offline since" moves with it', async () => {
    const transport = new FakeTransport();
    const time = manualTime();
    const plug = tasmotaSwitch(transport, { ...time, availabilityTopic: 'tele/plug/LWT' });
    await plug.start();
    transport.deliver('tele/plug/LWT', 'Offline');
    const sinceMs = plug.availability()?.sinceMs;
    assert.equal(sinceMs, time.nowMs());
    time.stepWall(-3_600_000);
    assert.deepEqual(plug.availability(), {
      state: 'offline',
      topic: 'tele/plug/LWT',
      sinceMs: sinceMs! - 3_600_000,
    });
  });
  test('given a state just reported, when the clock steps 2 h forward, then it is still fresh (stale 600 s after it came)', async () => {
    const { plug, time, state } = await tasmotaPlug();
    state('ON');
    time.stepWall(2 * 3_600_000);
    assert.equal(await plug.observe(), 1, 'a step is not time passing');
    time.advanceS(600);
    assert.equal(await plug.observe(), 1);
    time.advanceS(1);
    assert.equal(await plug.observe(), undefined, 'stale 601 s after it came');
  });

  test('given a plug that stopped reporting, when the clock steps 1 h back, then its last state still goes stale on time', async () => {
    const { plug, time, state } = await tasmotaPlug();
    state('ON');
    time.advanceS(590);
    time.stepWall(-3_600_000);
    time.advanceS(11);
    assert.equal(await plug.observe(), undefined, 'a dead plug does not look alive for the size of the step');
  });
});
