import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeviceLivenessTracker, parseLastSeen } from '../../../src/drivers/mqtt/liveness.js';
import { MAX_PAYLOAD_BYTES } from '../../../src/drivers/mqtt/payload.js';
import { StampClock } from '../../../src/time/stamps.js';
import { FakeTransport, manualTime } from './fake-transport.js';

describe('parseLastSeen', () => {
  const table: [unknown, number | undefined][] = [
    ['2026-12-02T07:40:12.000Z', Date.UTC(2026, 11, 2, 7, 40, 12)],
    ['2026-12-02T08:40:12+01:00', Date.UTC(2026, 11, 2, 7, 40, 12)],
    [1_796_197_212_000, 1_796_197_212_000],
    [1_796_197_212, 1_796_197_212_000],
    ['yesterday', undefined],
    ['2026-12-02', undefined],
    [0, undefined],
    [-5, undefined],
    [Number.NaN, undefined],
    [null, undefined],
    [true, undefined],
  ];
  for (const [value, expected] of table) {
    test(`${JSON.stringify(value)} → ${expected}`, () => assert.equal(parseLastSeen(value), expected));
  }
});

describe('DeviceLivenessTracker', () => {
  const AVAILABILITY = 'zigbee2mqtt/probe/availability';
  const HEARTBEAT = 'tele/th1/STATE';

  function tracker(opts: { availability?: boolean; heartbeat?: boolean; lastSeen?: boolean }) {
    const transport = new FakeTransport();
    const time = manualTime();
    let changes = 0;
    const live = new DeviceLivenessTracker(
      transport,
      {
        availabilityTopic: opts.availability ? AVAILABILITY : undefined,
        heartbeatTopic: opts.heartbeat ? HEARTBEAT : undefined,
        lastSeenField: opts.lastSeen ? 'last_seen' : undefined,
        maxQuietMs: 3_600_000,
      },
      new StampClock(time.nowMs, time.monotonicMs),
      () => changes++,
    );
    live.start();
    return { transport, time, live, changes: () => changes };
  }

  test('given nothing received, the device is not seen and not offline', () => {
    const { live } = tracker({ availability: true });
    assert.deepEqual(live.current(), { via: `availability ${AVAILABILITY}`, maxQuietMs: 3_600_000 });
  });

  test('given online, the device is seen now, every time it is asked, while the broker is connected', () => {
    const { transport, time, live, changes } = tracker({ availability: true });
    transport.deliver(AVAILABILITY, '{"state":"online"}', { retain: true });
    time.advanceS(1800);
    assert.equal(live.current().seenAtMs, time.nowMs());
    assert.equal(changes(), 1);
  });

  test('given online and then the broker lost, the device was last seen when the message came', () => {
    const { transport, time, live } = tracker({ availability: true });
    const arrivedMs = time.nowMs();
    transport.deliver(AVAILABILITY, 'online');
    time.advanceS(600);
    transport.connected = false;
    assert.equal(live.current().seenAtMs, arrivedMs);
  });

  test('given offline, the reading is void since the message, and the change is told at once', () => {
    const { transport, time, live, changes } = tracker({ availability: true });
    transport.deliver(AVAILABILITY, 'online');
    time.advanceS(60);
    transport.deliver(AVAILABILITY, '{"state":"offline"}');
    assert.equal(live.current().offlineSinceMs, time.nowMs());
    assert.equal(live.current().seenAtMs, undefined);
    assert.equal(changes(), 2);
  });

  test('given garbage on the availability topic, the device is not seen and the garbage is named', () => {
    const { transport, live } = tracker({ availability: true });
    transport.deliver(AVAILABILITY, 'online');
    transport.deliver(AVAILABILITY, 'bananas');
    assert.equal(live.current().seenAtMs, undefined);
    assert.match(live.current().via, /garbage "bananas"/);
  });

  test('given a heartbeat, the device is seen when it arrived', () => {
    const { transport, time, live } = tracker({ heartbeat: true });
    const arrivedMs = time.nowMs();
    transport.deliver(HEARTBEAT, '{"Uptime":"1T00:00:00"}');
    time.advanceS(100);
    assert.equal(live.current().seenAtMs, arrivedMs);
  });

  test('given a retained message on the heartbeat topic, it is no sign of life (the broker resends it at every resubscribe)', () => {
    const { transport, time, live } = tracker({ heartbeat: true });
    transport.deliver(HEARTBEAT, '{"Uptime":"1T00:00:00"}', { retain: true });
    assert.equal(live.current().seenAtMs, undefined);
    time.advanceS(100);
    const liveAtMs = time.nowMs();
    transport.deliver(HEARTBEAT, '{"Uptime":"1T00:01:40"}');
    time.advanceS(100);
    transport.deliver(HEARTBEAT, '{"Uptime":"1T00:01:40"}', { retain: true });
    assert.equal(live.current().seenAtMs, liveAtMs, 'a retained copy after a live one does not move it');
  });

  test('given a value message over MAX_PAYLOAD_BYTES, its last_seen is not read (no JSON parse of it)', () => {
    const { time, live } = tracker({ lastSeen: true });
    const seen = new Date(time.nowMs() - 40_000).toISOString();
    const padding = 'x'.repeat(MAX_PAYLOAD_BYTES);
    const oversized = Buffer.from(JSON.stringify({ last_seen: seen, padding }));
    assert.equal(live.noteValueMessage(oversized), undefined);
    assert.equal(live.current().seenAtMs, undefined);
  });

  test('given a last_seen in the value message, it is noted (returned as a stamp), never ahead of now', () => {
    const { time, live } = tracker({ lastSeen: true });
    const past = new Date(time.nowMs() - 40_000).toISOString();
    assert.equal(
      live.noteValueMessage(Buffer.from(JSON.stringify({ temperature: 19, last_seen: past }))),
      time.monotonicMs() - 40_000,
    );
    assert.equal(live.current().seenAtMs, time.nowMs() - 40_000);
    const future = new Date(time.nowMs() + 600_000).toISOString();
    assert.equal(
      live.noteValueMessage(Buffer.from(JSON.stringify({ last_seen: future }))),
      time.monotonicMs(),
    );
    assert.equal(live.current().seenAtMs, time.nowMs());
    assert.equal(live.noteValueMessage(Buffer.from('{"temperature":19}')), undefined);
  });

  /**
   * Zigbee2MQTT's last will is `<base>/bridge/state` `{"state":"offline"}` (legacy `offline`);
   * the devices' `<base>/<device>/availability` stays retained `online` when it crashes
   * (zigbee2mqtt.io guide/usage/mqtt_topics_and_messages, "zigbee2mqtt/bridge/state").
   */
  describe('with the Zigbee2MQTT bridge state topic', () => {
    const BRIDGE = 'zigbee2mqtt/bridge/state';

    function bridged() {
      const transport = new FakeTransport();
      const time = manualTime();
      let changes = 0;
      const live = new DeviceLivenessTracker(
        transport,
        { availabilityTopic: AVAILABILITY, bridgeStateTopic: BRIDGE, maxQuietMs: 3_600_000 },
        time.nowMs,
        () => changes++,
      );
      live.start();
      transport.deliver(AVAILABILITY, '{"state":"online"}', { retain: true });
      transport.deliver(BRIDGE, '{"state":"online"}', { retain: true });
      return { transport, time, live, changes: () => changes };
    }

    const table: [string, string | undefined, { offline: boolean; seen: boolean; via: string }][] = [
      [
        'the bridge online',
        '{"state":"online"}',
        { offline: false, seen: true, via: `availability ${AVAILABILITY}` },
      ],
      [
        'the bridge offline (its last will)',
        '{"state":"offline"}',
        { offline: true, seen: false, via: `availability ${AVAILABILITY}, bridge ${BRIDGE} offline` },
      ],
      [
        'the bridge offline, legacy payload',
        'offline',
        { offline: true, seen: false, via: `availability ${AVAILABILITY}, bridge ${BRIDGE} offline` },
      ],
      [
        'garbage on the bridge topic',
        'bananas',
        {
          offline: false,
          seen: false,
          via: `availability ${AVAILABILITY}, bridge ${BRIDGE}, garbage "bananas"`,
        },
      ],
    ];
    for (const [name, payload, expected] of table) {
      test(`given the device online, when ${name}, then offline ${expected.offline}, seen ${expected.seen}`, () => {
        const { transport, time, live } = bridged();
        time.advanceS(30);
        if (payload !== undefined) transport.deliver(BRIDGE, payload, { retain: true });
        const now = live.current();
        assert.equal(now.offlineSinceMs, expected.offline ? time.nowMs() : undefined);
        assert.equal(now.seenAtMs, expected.seen ? time.nowMs() : undefined);
        assert.equal(now.via, expected.via);
      });
    }

    test('the bridge going offline is told at once, and it subscribes to the bridge topic and lets go of it', () => {
      const { transport, live, changes } = bridged();
      const before = changes();
      transport.deliver(BRIDGE, '{"state":"offline"}', { retain: true });
      assert.equal(changes(), before + 1);
      assert.equal(transport.handlerCount(BRIDGE), 1);
      live.stop();
      assert.equal(transport.handlerCount(BRIDGE), 0);
    });

    test('given the bridge never heard from (another base topic), then the device availability alone counts', () => {
      const transport = new FakeTransport();
      const time = manualTime();
      const live = new DeviceLivenessTracker(
        transport,
        { availabilityTopic: AVAILABILITY, bridgeStateTopic: BRIDGE, maxQuietMs: 3_600_000 },
        time.nowMs,
        () => {},
      );
      live.start();
      transport.deliver(AVAILABILITY, 'online', { retain: true });
      assert.equal(live.current().seenAtMs, time.nowMs());
    });
  });

  test('a clock step moves every stamp with it', () => {
    const { transport, live, time } = tracker({ heartbeat: true });
    transport.deliver(HEARTBEAT, 'x');
    const before = live.current().seenAtMs!;
    time.stepWall(-3_600_000);
    assert.equal(live.current().seenAtMs, before - 3_600_000);
  });

  test('after stop, nothing is subscribed', () => {
    const { transport, live } = tracker({ availability: true, heartbeat: true });
    live.stop();
    assert.equal(transport.handlerCount(AVAILABILITY) + transport.handlerCount(HEARTBEAT), 0);
  });
});
