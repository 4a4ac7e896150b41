/**
 * The fleet view's collector (src/mqtt/fleet.ts): what it keeps of the retained states and
 * availability other nodes publish on the shared broker, and what it drops. Messages come from a
 * fake connection that records the subscriptions and plays the broker; payloads are made by the
 * real publisher (statePayload), then spoiled by each case.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IPublishPacket } from 'mqtt';
import type { LoopStatus } from '../../src/core/status.js';
import type { Condition } from '../../src/core/types.js';
import type { MessageHandler } from '../../src/mqtt/client.js';
import { FleetCollector, type FleetCollectorOptions } from '../../src/mqtt/fleet.js';
import { statePayload } from '../../src/mqtt/state-payload.js';
import { topicMatchesFilter } from '../../src/mqtt/topic-filter.js';
import { LogLevel, recordingLogger, silentLogger } from '../support/logger.js';

type Handler = MessageHandler;

/** The part of MqttConnection the collector uses; `deliver` plays the broker (a throwing handler fails the test). */
class FakeConnection {
  readonly subscriptions: { filter: string; qos: 0 | 1; handler: Handler }[] = [];
  subscribe(filter: string, qos: 0 | 1, handler: Handler): void {
    this.subscriptions.push({ filter, qos, handler });
  }
  unsubscribe(filter: string, handler: Handler): void {
    const i = this.subscriptions.findIndex((s) => s.filter === filter && s.handler === handler);
    if (i >= 0) this.subscriptions.splice(i, 1);
  }
  deliver(topic: string, payload: string | Buffer): void {
    for (const { filter, handler } of this.subscriptions) {
      const packet = { cmd: 'publish', topic, qos: 0, dup: false, retain: true } as IPublishPacket;
      if (topicMatchesFilter(filter, topic)) handler(topic, Buffer.from(payload), packet);
    }
  }
}

const T0 = Date.UTC(2026, 0, 1);

const condition = (type: Condition['type'], status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: reason,
  lastTransitionMs: T0,
  observedGeneration: 1,
});

function status(loop: string, overrides: Partial<LoopStatus> = {}): LoopStatus {
  return {
    loop,
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 19.5,
    measuredAtMs: T0,
    output: 0.25,
    action: 'heating',
    generation: 1,
    observedGeneration: 1,
    actuators: { heater: { wanted: 1, observed: 1 } },
    conditions: [condition('SensorHealthy', 'True', 'Fresh'), condition('Faulted', 'False', 'NoFault')],
    updatedAtMs: T0,
    ...overrides,
  };
}

/** The state JSON exactly as a node publishes it, with `edit` applied to the object. */
function payload(loop: string, edit: (p: Record<string, unknown>) => void = () => {}): string {
  const p = statePayload(status(loop));
  edit(p);
  return JSON.stringify(p);
}

function collector(opts: Partial<Omit<FleetCollectorOptions, 'connection'>> = {}) {
  const connection = new FakeConnection();
  const fleet = new FleetCollector({ connection, baseTopic: 'homeostat', logger: silentLogger, ...opts });
  fleet.start();
  return { connection, fleet };
}

const loopsOf = (fleet: FleetCollector) =>
  fleet.nodes().flatMap((n) => n.loops.map((l) => `${n.node}/${l.loop}`));

describe('FleetCollector', () => {
  test('given a start, then it subscribes to every state and availability under the base topic, at QoS 0', () => {
    const { connection } = collector({ baseTopic: 'home/climate' });
    assert.deepEqual(
      connection.subscriptions.map(({ filter, qos }) => ({ filter, qos })),
      [
        { filter: 'home/climate/+/+/state', qos: 0 },
        { filter: 'home/climate/+/availability', qos: 0 },
      ],
    );
  });

  test('given a stop, then both subscriptions are removed', () => {
    const { connection, fleet } = collector();
    fleet.stop();
    assert.deepEqual(connection.subscriptions, []);
  });

  test('when a node publishes a valid state, then the shown fields are kept (the rest dropped)', () => {
    const { connection, fleet } = collector();
    connection.deliver('homeostat/pi-2/room/state', payload('room'));
    assert.deepEqual(fleet.nodes(), [
      {
        node: 'pi-2',
        online: undefined,
        loops: [
          {
            loop: 'room',
            name: undefined,
            unit: undefined,
            mode: 'heat',
            action: 'heating',
            setpoint: 20,
            measured: 19.5,
            output: 0.25,
            fault: undefined,
            updatedAt: '2026-01-01T00:00:00.000Z',
          },
        ],
      },
    ]);
    assert.equal(
      Object.values(fleet.dropped()).reduce((a, b) => a + b),
      0,
    );
  });

  test('when a loop publishes again, then the newer state replaces it; a name and unit published are kept', () => {
    const { connection, fleet } = collector();
    connection.deliver('homeostat/pi-2/room/state', payload('room'));
    connection.deliver(
      'homeostat/pi-2/room/state',
      payload('room', (p) =>
        Object.assign(p, { setpoint: 21.5, measured: null, name: 'Living room', unit: '°C' }),
      ),
    );
    const [loop] = fleet.nodes()[0]!.loops;
    assert.equal(loop!.setpoint, 21.5);
    assert.equal(loop!.measured, null);
    assert.equal(loop!.name, 'Living room');
    assert.equal(loop!.unit, '°C');
  });

  test('when the Faulted condition is True, then the loop carries its reason', () => {
    const { connection, fleet } = collector();
    const faulted = statePayload(
      status('room', { conditions: [condition('Faulted', 'True', 'SensorStale')] }),
    );
    connection.deliver('homeostat/pi-2/room/state', JSON.stringify(faulted));
    assert.equal(fleet.nodes()[0]!.loops[0]!.fault, 'SensorStale');
  });

  test('when a payload is larger than the limit, then it is dropped unread and counted', () => {
    const { connection, fleet } = collector({ maxPayloadBytes: 2_000 });
    const big = payload('room', (p) => Object.assign(p, { padding: 'x'.repeat(2_000) }));
    connection.deliver('homeostat/pi-2/room/state', big);
    assert.deepEqual(fleet.nodes(), []);
    assert.equal(fleet.dropped().tooLarge, 1);
  });

  describe('when a payload is not a state the page can show, then it is dropped as invalid', () => {
    const cases: [what: string, body: string | Buffer][] = [
      ['not JSON', '{"loop":"room",'],
      ['not UTF-8 JSON', Buffer.from([0xff, 0xfe, 0x00, 0x7b])],
      ['JSON but not an object', '[1,2,3]'],
      ['a number', '21.5'],
      ['null', 'null'],
      ['setpoint a string', payload('room', (p) => Object.assign(p, { setpoint: '20' }))],
      ['measured missing', payload('room', (p) => delete p.measured)],
      ['updatedAt not a time', payload('room', (p) => Object.assign(p, { updatedAt: 'yesterday' }))],
      ['conditions not a list', payload('room', (p) => Object.assign(p, { conditions: 'fine' }))],
      [
        'an action of 1,000 characters',
        payload('room', (p) => Object.assign(p, { action: 'a'.repeat(1000) })),
      ],
      ['a unit of 100 characters', payload('room', (p) => Object.assign(p, { unit: 'u'.repeat(100) }))],
      ['another loop on this loop topic', payload('kitchen')],
      ['a __proto__ key instead of fields', '{"__proto__":{"setpoint":20}}'],
    ];
    for (const [what, body] of cases) {
      test(what, () => {
        const { connection, fleet } = collector();
        connection.deliver('homeostat/pi-2/room/state', body);
        assert.deepEqual(fleet.nodes(), []);
        assert.equal(fleet.dropped().invalid, 1);
      });
    }
  });

  describe('when a topic has ids the config schema refuses, then the message is dropped as badTopic', () => {
    const topics = [
      'homeostat/Pi-2/room/state', // node ids are lowercase
      'homeostat/pi-2/living-room/state', // loop ids have no `-`
      'homeostat/pi 2/room/state',
      'homeostat/pi-2/Room/state',
      `homeostat/${'n'.repeat(65)}/room/state`,
      'homeostat/pi.2/availability',
    ];
    for (const topic of topics) {
      test(topic.length > 60 ? `${topic.slice(0, 40)}… (an id too long)` : topic, () => {
        const { connection, fleet } = collector();
        const loop = topic.split('/')[2]!;
        connection.deliver(topic, topic.endsWith('availability') ? 'online' : payload(loop));
        assert.deepEqual(fleet.nodes(), []);
        assert.equal(fleet.dropped().badTopic, 1);
      });
    }
  });

  test('when an empty message arrives on a state topic, then that loop is deleted (its finalizer cleared it)', () => {
    const { connection, fleet } = collector();
    connection.deliver('homeostat/pi-2/room/state', payload('room'));
    connection.deliver('homeostat/pi-2/attic/state', payload('attic'));
    connection.deliver('homeostat/pi-2/room/state', '');
    assert.deepEqual(loopsOf(fleet), ['pi-2/attic']);
    connection.deliver('homeostat/pi-2/attic/state', '');
    assert.deepEqual(fleet.nodes(), [], 'a node with no loop and no availability is gone');
    assert.equal(
      Object.values(fleet.dropped()).reduce((a, b) => a + b),
      0,
    );
  });

  test('given the loop cap is reached, then new loops are dropped and counted; known ones still update and a deletion frees a place', () => {
    const { connection, fleet } = collector({ maxLoops: 2 });
    connection.deliver('homeostat/pi-1/a/state', payload('a'));
    connection.deliver('homeostat/pi-2/b/state', payload('b'));
    connection.deliver('homeostat/pi-3/c/state', payload('c'));
    connection.deliver('homeostat/pi-3/d/state', payload('d'));
    assert.deepEqual(loopsOf(fleet), ['pi-1/a', 'pi-2/b']);
    assert.equal(fleet.dropped().full, 2);

    connection.deliver(
      'homeostat/pi-2/b/state',
      payload('b', (p) => Object.assign(p, { setpoint: 25 })),
    );
    assert.equal(fleet.nodes()[1]!.loops[0]!.setpoint, 25);
    connection.deliver('homeostat/pi-1/a/state', '');
    connection.deliver('homeostat/pi-3/c/state', payload('c'));
    assert.deepEqual(loopsOf(fleet), ['pi-2/b', 'pi-3/c']);
    assert.equal(fleet.dropped().full, 2);
  });

  test('availability: online and offline are kept per node, an empty one forgets it, anything else is invalid', () => {
    const { connection, fleet } = collector();
    const online = () => Object.fromEntries(fleet.nodes().map((n) => [n.node, n.online]));
    connection.deliver('homeostat/pi-1/availability', 'online');
    connection.deliver('homeostat/pi-2/availability', 'offline');
    connection.deliver('homeostat/pi-3/room/state', payload('room'));
    assert.deepEqual(online(), { 'pi-1': true, 'pi-2': false, 'pi-3': undefined });

    connection.deliver('homeostat/pi-1/availability', 'offline');
    connection.deliver('homeostat/pi-2/availability', '');
    connection.deliver('homeostat/pi-3/availability', 'ONLINE');
    assert.deepEqual(online(), { 'pi-1': false, 'pi-3': undefined });
    assert.equal(fleet.dropped().invalid, 1);
  });

  test('given the node cap is reached, then availability of new nodes is dropped and counted', () => {
    const { connection, fleet } = collector({ maxNodes: 1 });
    connection.deliver('homeostat/pi-1/availability', 'online');
    connection.deliver('homeostat/pi-2/availability', 'online');
    connection.deliver('homeostat/pi-1/availability', 'offline');
    assert.deepEqual(
      fleet.nodes().map((n) => [n.node, n.online]),
      [['pi-1', false]],
    );
    assert.equal(fleet.dropped().full, 1);
  });

  test('then the first drop of each reason is a warning, the ones after are debug lines', () => {
    const log = recordingLogger();
    const { connection } = collector({ logger: log.logger });
    connection.deliver('homeostat/pi-2/room/state', 'junk');
    connection.deliver('homeostat/pi-2/room/state', 'junk');
    connection.deliver('homeostat/PI/room/state', payload('room'));
    assert.equal(log.atLevel(LogLevel.warn).length, 2);
    assert.equal(log.atLevel(LogLevel.debug).length, 1);
    assert.deepEqual(
      log.atLevel(LogLevel.warn).map((r) => r.reason),
      ['invalid', 'badTopic'],
    );
  });

  test('then nodes come sorted by id and their loops by id, whatever the order of arrival', () => {
    const { connection, fleet } = collector();
    for (const topic of ['pi-b/z', 'pi-a/m', 'pi-b/a', 'pi-a/b']) {
      const [node, loop] = topic.split('/') as [string, string];
      connection.deliver(`homeostat/${node}/${loop}/state`, payload(loop));
    }
    assert.deepEqual(loopsOf(fleet), ['pi-a/b', 'pi-a/m', 'pi-b/a', 'pi-b/z']);
  });
});
