/**
 * The Shelly Gen2/Gen3 and ESPHome presets as specifications: the exact topics and payloads
 * homeostat sends, and how it reads what the devices publish.
 *
 * Payloads reproduced here, and where they come from:
 * - Shelly Gen2/Gen3, https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Switch:
 *   `Switch.Set` takes `id` (the Switch), `on` (true/false) and the optional `toggle_after`
 *   (seconds, the flip-back timer); the Switch status has `id`, `source`, `output`
 *   (true/false), and on metered models `apower`, `voltage`, `current`, `aenergy`,
 *   `temperature`, plus `timer_started_at`/`timer_duration` while a flip-back timer runs.
 * - Shelly, https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Mqtt: RPC requests
 *   on `<topic_prefix>/rpc` (a frame with `id`, `src`, `method`, `params`, gen2/General/RPCProtocol),
 *   the whole status of a component on `<topic_prefix>/status/<component>:<id>` with
 *   `status_ntf` on, `true`/`false` on `<topic_prefix>/online` (retained, the last will).
 * - ESPHome, https://esphome.io/components/mqtt.html: a component's topics are
 *   `<topic_prefix>/<component_type>/<object_id>/command` and `…/state`; a switch takes and
 *   reports `ON`/`OFF` (esphome/esphome components/mqtt/mqtt_switch.cpp); birth `online` and
 *   will `offline` on `<topic_prefix>/status`. A number takes the plain number on its command
 *   topic and reports it with its accuracy (`42` or `42.0`, components/mqtt/mqtt_number.cpp).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { availabilityTopic, parseAvailability } from '../../../src/drivers/mqtt/availability.js';
import { parseNumberPayload, parseSwitchState } from '../../../src/drivers/mqtt/payload.js';
import {
  deadManFor,
  levelPreset,
  SHELLY_RPC_SRC,
  type SwitchPayloads,
  shellyReplyLevel,
  shellySwitchSet,
  switchPreset,
} from '../../../src/drivers/mqtt/switch-presets.js';
import { buildDrivers } from '../../../src/kinds/build.js';
import { FakeTransport } from './fake-transport.js';

/** The Switch.Set frame Shelly's docs describe, as an object (compared after parsing). */
function switchSet(id: number, on: boolean, toggleAfterS?: number, device = 'shellyplus1pm-a8032ab12345') {
  const params = toggleAfterS === undefined ? { id, on } : { id, on, toggle_after: toggleAfterS };
  const frameId = `switch:${id}:${on ? 'on' : 'off'}`;
  return { id: frameId, src: `${SHELLY_RPC_SRC}/${device}`, method: 'Switch.Set', params };
}

/** A Shelly Plus 1PM's `status/switch:0`, as Switch.GetStatus documents it. */
function shellyStatus(output: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 0,
    source: 'MQTT',
    output,
    apower: output === true ? 1180.2 : 0,
    voltage: 231.4,
    current: output === true ? 5.12 : 0,
    aenergy: { total: 5123.456, by_minute: [19.6, 19.7, 19.6], minute_ts: 1_733_140_800 },
    temperature: { tC: 41.2, tF: 106.2 },
    ...extra,
  });
}

describe('shelly preset: the topics and the Switch.Set frames', () => {
  // Given a topic prefix and a switch id, when the preset is resolved, then:
  const cases: { switchId: number | undefined; command: string; state: string; id: number }[] = [
    {
      switchId: undefined,
      command: 'shellyplus1pm-a8032ab12345/rpc',
      state: 'shellyplus1pm-a8032ab12345/status/switch:0',
      id: 0,
    },
    {
      switchId: 0,
      command: 'shellyplus1pm-a8032ab12345/rpc',
      state: 'shellyplus1pm-a8032ab12345/status/switch:0',
      id: 0,
    },
    {
      switchId: 1,
      command: 'shellyplus1pm-a8032ab12345/rpc',
      state: 'shellyplus1pm-a8032ab12345/status/switch:1',
      id: 1,
    },
  ];
  for (const { switchId, command, state, id } of cases) {
    test(`switchId ${switchId ?? '(default)'}: Switch.Set id ${id} on ${command}, state field output of ${state}`, () => {
      const preset = switchPreset('shelly', 'shellyplus1pm-a8032ab12345', { switchId });
      assert.deepEqual(
        { ...preset, payloadOn: JSON.parse(preset.payloadOn), payloadOff: JSON.parse(preset.payloadOff) },
        {
          commandTopic: command,
          stateTopic: state,
          replyTopic: 'homeostat-rpc/shellyplus1pm-a8032ab12345/rpc',
          payloadOn: switchSet(id, true),
          payloadOff: switchSet(id, false),
          stateOn: 'true',
          stateOff: 'false',
          stateField: 'output',
        },
      );
    });
  }

  test('the frames are exactly the documented JSON, key order included (what a broker log shows)', () => {
    const src = 'homeostat-rpc/plug';
    assert.equal(
      shellySwitchSet(0, true, src),
      '{"id":"switch:0:on","src":"homeostat-rpc/plug","method":"Switch.Set","params":{"id":0,"on":true}}',
    );
    assert.equal(
      shellySwitchSet(0, false, src),
      '{"id":"switch:0:off","src":"homeostat-rpc/plug","method":"Switch.Set","params":{"id":0,"on":false}}',
    );
    assert.equal(
      shellySwitchSet(2, true, src, 600),
      '{"id":"switch:2:on","src":"homeostat-rpc/plug","method":"Switch.Set","params":{"id":2,"on":true,"toggle_after":600}}',
    );
  });

  test('the preset never uses Switch.Toggle (a repeated toggle undoes itself)', () => {
    const { payloadOn, payloadOff } = switchPreset('shelly', 'plug');
    assert.equal(JSON.parse(payloadOn).method, 'Switch.Set');
    assert.equal(JSON.parse(payloadOff).method, 'Switch.Set');
  });
});

describe('shelly preset: answers on homeostat-rpc/<device>/rpc', () => {
  const payloads = switchPreset('shelly', 'plug', { switchId: 1 });
  // Given an answer frame (gen2/General/RPCProtocol: id, src, dst, result or error), then:
  const cases: [string, unknown, 0 | 1 | undefined][] = [
    [
      'result to the ON frame',
      { id: 'switch:1:on', src: 'shellyplus2pm-1', dst: 'homeostat-rpc/plug', result: { was_on: false } },
      1,
    ],
    ['result to the OFF frame', { id: 'switch:1:off', src: 'shellyplus2pm-1', result: { was_on: true } }, 0],
    [
      'an error to the OFF frame',
      { id: 'switch:1:off', src: 'x', error: { code: -103, message: 'Invalid argument' } },
      undefined,
    ],
    ['a result to another switch', { id: 'switch:0:off', src: 'x', result: { was_on: true } }, undefined],
    ['a result with another id (someone else)', { id: 1, src: 'x', result: { was_on: true } }, undefined],
    ['no result', { id: 'switch:1:on', src: 'x' }, undefined],
    ['not JSON', 'banana', undefined],
  ];
  for (const [what, frame, level] of cases) {
    test(`${what}: ${level ?? 'not a state'}`, () => {
      const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
      assert.equal(shellyReplyLevel(text, payloads), level);
    });
  }
});

describe('shelly preset: reading status/switch:<n>', () => {
  const format = switchPreset('shelly', 'plug');
  // Given what the device publishes on its status topic, when it is read, then:
  const cases: [string, string, { ok: true; value: 0 | 1 } | 'missing' | RegExp][] = [
    ['output true (1PM, on, drawing 1180 W)', shellyStatus(true), { ok: true, value: 1 }],
    ['output false', shellyStatus(false), { ok: true, value: 0 }],
    [
      'output true with a flip-back timer running',
      shellyStatus(true, { timer_started_at: 1_733_140_812.5, timer_duration: 600 }),
      { ok: true, value: 1 },
    ],
    ['a Plus 1 (no metering)', '{"id":0,"source":"init","output":false}', { ok: true, value: 0 }],
    ['no output field (not about the relay)', '{"id":0,"apower":0}', 'missing'],
    ['output is not a boolean', shellyStatus('maybe'), /neither "true" nor "false"/],
    ['output is an object', shellyStatus({ on: true }), /field output is .*not a state/],
    ['not JSON', 'on', /not JSON/],
  ];
  for (const [name, payload, expected] of cases) {
    test(`${name} → ${expected instanceof RegExp ? 'rejected' : expected === 'missing' ? 'ignored' : expected.value}`, () => {
      const parsed = parseSwitchState(Buffer.from(payload), format);
      if (expected === 'missing')
        assert.deepEqual(parsed, { ok: false, missing: true, reason: 'no field output' });
      else if (expected instanceof RegExp) {
        assert.equal(parsed.ok, false);
        assert.match(parsed.ok ? '' : parsed.reason, expected);
        assert.equal(parsed.ok ? true : parsed.missing, false);
      } else assert.deepEqual(parsed, expected);
    });
  }
});

describe("shelly preset: the dead man's switch is toggle_after in the ON only", () => {
  test('given deadManS 600, then the ON frame carries toggle_after 600', () => {
    const preset = switchPreset('shelly', 'plug', { switchId: 1 });
    const built = deadManFor('shelly', preset, 600);
    assert.ok(built.ok);
    assert.equal(built.deadMan.kind, 'shelly-toggle-after');
    assert.equal(built.deadMan.seconds, 600);
    assert.deepEqual(
      JSON.parse('payloadOn' in built.deadMan ? built.deadMan.payloadOn : ''),
      switchSet(1, true, 600, 'plug'),
    );
  });

  const refused: [string, Pick<SwitchPayloads, 'commandTopic' | 'payloadOn'>, number, RegExp][] = [
    ['a plain ON payload', { commandTopic: 'plug/rpc', payloadOn: 'on' }, 600, /a JSON Switch\.Set request/],
    [
      'another RPC method',
      { commandTopic: 'plug/rpc', payloadOn: '{"method":"Light.Set","params":{"id":0,"on":true}}' },
      600,
      /a JSON Switch\.Set request/,
    ],
    [
      'a Switch.Set without params',
      { commandTopic: 'plug/rpc', payloadOn: '{"method":"Switch.Set"}' },
      600,
      /a JSON Switch\.Set request/,
    ],
    ['more than a day', switchPreset('shelly', 'plug'), 86_401, /within 1\.\.86400 with preset shelly/],
    ['a fraction of a second', switchPreset('shelly', 'plug'), 600.5, /whole seconds/],
  ];
  for (const [name, payloads, seconds, problem] of refused) {
    test(`${name} → refused`, () => {
      const built = deadManFor('shelly', payloads, seconds);
      assert.equal(built.ok, false);
      assert.match(built.ok ? '' : built.problem, problem);
    });
  }
});

describe('esphome preset: switch and number topics', () => {
  test('switch: <prefix>/switch/<object_id>/command ON/OFF, state ON/OFF on …/state', () => {
    assert.deepEqual(switchPreset('esphome', 'brewshed', { entity: 'heat_mat' }), {
      commandTopic: 'brewshed/switch/heat_mat/command',
      stateTopic: 'brewshed/switch/heat_mat/state',
      payloadOn: 'ON',
      payloadOff: 'OFF',
      stateOn: 'ON',
      stateOff: 'OFF',
    });
  });

  const format = switchPreset('esphome', 'brewshed', { entity: 'heat_mat' });
  const states: [string, { ok: true; value: 0 | 1 } | RegExp][] = [
    ['ON', { ok: true, value: 1 }],
    ['OFF', { ok: true, value: 0 }],
    ['TOGGLE', /neither "ON" nor "OFF"/],
    ['', /neither "ON" nor "OFF"/],
  ];
  for (const [payload, expected] of states) {
    test(`switch state ${JSON.stringify(payload)} → ${expected instanceof RegExp ? 'rejected' : expected.value}`, () => {
      const parsed = parseSwitchState(Buffer.from(payload), format);
      if (expected instanceof RegExp) assert.match(parsed.ok ? '' : parsed.reason, expected);
      else assert.deepEqual(parsed, expected);
    });
  }

  test('esphome has no off timer homeostat can set: no dead man', () => {
    const built = deadManFor('esphome', format, 600);
    assert.deepEqual(built, {
      ok: false,
      problem: 'is not available with preset esphome (no off timer settable over MQTT)',
    });
  });

  test('number: <prefix>/number/<object_id>/command and …/state', () => {
    assert.deepEqual(levelPreset('esphome', 'kettle', 'kettle_power'), {
      commandTopic: 'kettle/number/kettle_power/command',
      stateTopic: 'kettle/number/kettle_power/state',
    });
  });

  const numbers: [string, number][] = [
    ['42', 42],
    ['42.0', 42],
    ['0.5', 0.5],
    ['100.00', 100],
  ];
  for (const [payload, value] of numbers) {
    test(`number state ${payload} → ${value}`, () => {
      assert.deepEqual(parseNumberPayload(Buffer.from(payload)), { ok: true, value });
    });
  }
});

describe('availability topics and words of shelly and esphome', () => {
  const cases: [Parameters<typeof availabilityTopic>[0], string, string, string, string][] = [
    ['shelly', 'shellyplus1pm-a8032ab12345', 'shellyplus1pm-a8032ab12345/online', 'true', 'false'],
    ['esphome', 'brewshed', 'brewshed/status', 'online', 'offline'],
  ];
  for (const [preset, device, topic, online, offline] of cases) {
    test(`${preset}: ${topic}, ${online} / ${offline}`, () => {
      assert.equal(availabilityTopic(preset, device), topic);
      assert.equal(parseAvailability(Buffer.from(online)), 'online');
      assert.equal(parseAvailability(Buffer.from(offline)), 'offline');
    });
  }
});

/** A node whose heater is the given mqtt_switch section (YAML flow mapping). */
function shellyConfig(heater: string): Config {
  const loaded = parseConfigText(`
version: 1
node: { id: pi }
mqtt: {}
sensors:
  t: { kind: mqtt, topic: tele/th1/SENSOR, field: AM2301.Temperature }
actuators:
  heater: ${heater}
loops:
  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  return loaded.config;
}

describe('from config to the wire: a Shelly heater', () => {
  async function heaterOn(section: string) {
    const transport = new FakeTransport();
    const heater = buildDrivers(shellyConfig(section), () => 0, { mqtt: transport }).actuators.get('heater');
    assert.ok(heater);
    await heater.start?.();
    return { heater, transport };
  }

  test('given preset shelly, when started, then it follows status/switch:0, online and its answers', async () => {
    const { transport } = await heaterOn('{ kind: mqtt_switch, preset: shelly, device: shellyplus1pm-a8 }');
    assert.deepEqual(
      transport.subscriptions.map((s) => s.filter),
      ['shellyplus1pm-a8/status/switch:0', 'shellyplus1pm-a8/online', 'homeostat-rpc/shellyplus1pm-a8/rpc'],
    );
  });

  test('given the default deadManS (600), every ON (keep-alives too) re-arms toggle_after, no OFF carries it', async () => {
    const { heater, transport } = await heaterOn(
      '{ kind: mqtt_switch, preset: shelly, device: shellyplus1pm-a8 }',
    );
    await heater.write(1);
    await heater.write(1); // the keep-alive: the same ON, the device's countdown starts afresh
    await heater.write(0);
    assert.deepEqual(
      transport.published.map(({ topic, payload, opts }) => [topic, JSON.parse(payload), opts]),
      [
        ['shellyplus1pm-a8/rpc', switchSet(0, true, 600, 'shellyplus1pm-a8'), { qos: 1, retain: false }],
        ['shellyplus1pm-a8/rpc', switchSet(0, true, 600, 'shellyplus1pm-a8'), { qos: 1, retain: false }],
        [
          'shellyplus1pm-a8/rpc',
          switchSet(0, false, undefined, 'shellyplus1pm-a8'),
          { qos: 1, retain: false },
        ],
      ],
    );
  });

  test('given deadManS 0 and switchId 1, ON and OFF are plain Switch.Set on switch 1', async () => {
    const { heater, transport } = await heaterOn(
      '{ kind: mqtt_switch, preset: shelly, device: plus2pm, switchId: 1, deadManS: 0 }',
    );
    await heater.write(1);
    await heater.write(0);
    assert.deepEqual(
      transport.published.map(({ payload }) => JSON.parse(payload)),
      [switchSet(1, true, undefined, 'plus2pm'), switchSet(1, false, undefined, 'plus2pm')],
    );
  });

  test('when the device reports output true, then the heater is observed on; false: off', async () => {
    const { heater, transport } = await heaterOn('{ kind: mqtt_switch, preset: shelly, device: plug }');
    transport.deliver('plug/status/switch:0', shellyStatus(true));
    assert.equal(await heater.observe(), 1);
    transport.deliver('plug/status/switch:0', shellyStatus(false));
    assert.equal(await heater.observe(), 0);
  });

  test("given a heater kept off past stateStaleAfterS (a Shelly says nothing while unchanged), the answer to the keep-alive's OFF confirms it off", async () => {
    const transport = new FakeTransport();
    let nowMs = 0;
    const config = shellyConfig('{ kind: mqtt_switch, preset: shelly, device: plug, stateStaleAfterS: 600 }');
    const heater = buildDrivers(config, () => nowMs, { mqtt: transport }).actuators.get('heater')!;
    await heater.start?.();
    transport.deliver('plug/status/switch:0', shellyStatus(false));
    nowMs = 601_000;
    assert.equal(await heater.observe(), undefined, 'stale: unknown');
    await heater.write(0); // the keep-alive
    const sent = JSON.parse(transport.published.at(-1)!.payload) as { id: string; src: string };
    transport.deliver(
      `${sent.src}/rpc`,
      JSON.stringify({ id: sent.id, src: 'shellyplus1pm-x', result: { was_on: false } }),
    );
    assert.equal(await heater.observe(), 0, 'the answer is a fresh state report');
  });

  test('given an answer to the ON frame, the heater is observed on', async () => {
    const { heater, transport } = await heaterOn('{ kind: mqtt_switch, preset: shelly, device: plug }');
    await heater.write(1);
    const sent = JSON.parse(transport.published.at(-1)!.payload) as { id: string };
    transport.deliver(
      'homeostat-rpc/plug/rpc',
      JSON.stringify({ id: sent.id, src: 'x', result: { was_on: false } }),
    );
    assert.equal(await heater.observe(), 1);
  });

  test('given preset esphome, ON/OFF on the switch command topic; state and status followed', async () => {
    const { heater, transport } = await heaterOn(
      '{ kind: mqtt_switch, preset: esphome, device: brewshed, entity: heat_mat }',
    );
    await heater.write(1);
    await heater.write(0);
    assert.deepEqual(
      transport.subscriptions.map((s) => s.filter),
      ['brewshed/switch/heat_mat/state', 'brewshed/status'],
    );
    assert.deepEqual(
      transport.published.map(({ topic, payload }) => [topic, payload]),
      [
        ['brewshed/switch/heat_mat/command', 'ON'],
        ['brewshed/switch/heat_mat/command', 'OFF'],
      ],
    );
    transport.deliver('brewshed/switch/heat_mat/state', 'ON');
    assert.equal(await heater.observe(), 1);
  });

  test('given mqtt_level preset esphome, the level goes out as the number and its state reads back', async () => {
    const { heater, transport } = await heaterOn(
      '{ kind: mqtt_level, preset: esphome, device: kettle, entity: kettle_power, levelScale: 100 }',
    );
    assert.deepEqual(
      transport.subscriptions.map((s) => s.filter),
      ['kettle/number/kettle_power/state', 'kettle/status'],
    );
    await heater.write(0.42);
    assert.deepEqual(
      transport.published.map(({ topic, payload, opts }) => [topic, payload, opts]),
      [['kettle/number/kettle_power/command', '42', { qos: 1, retain: false }]],
    );
    transport.deliver('kettle/number/kettle_power/state', '42.0'); // the number's accuracy
    assert.equal(await heater.observe(), 0.42);
    transport.deliver('kettle/status', 'offline');
    assert.equal(await heater.observe(), undefined, 'an offline node says nothing of its output');
  });
});
