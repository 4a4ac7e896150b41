import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import { assertPlainTopic, topicsFor } from '../../src/mqtt/topics.js';

/** MQTT topic filter matching (spec 4.7): `+` one level, `#` the rest. */
function matches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

describe('topicsFor (the contract in docs/home-assistant.md)', () => {
  const topics = topicsFor('homeostat', 'pi-1');

  test('given base topic homeostat and node pi-1, every topic is under homeostat/pi-1', () => {
    assert.equal(topics.base, 'homeostat/pi-1');
    assert.equal(topics.availability, 'homeostat/pi-1/availability');
    assert.equal(topics.loopState('room'), 'homeostat/pi-1/room/state');
    assert.equal(topics.loopCommand('room', 'setpoint'), 'homeostat/pi-1/room/setpoint/set');
    assert.equal(topics.loopCommand('room', 'mode'), 'homeostat/pi-1/room/mode/set');
    assert.equal(topics.loopCommand('room', 'json'), 'homeostat/pi-1/room/set');
    assert.equal(topics.loopResult('room'), 'homeostat/pi-1/room/result');
    assert.equal(topics.loopCommand('room', 'faultReset'), 'homeostat/pi-1/room/fault/reset');
    assert.equal(topics.loopCommand('room', 'autotune'), 'homeostat/pi-1/room/autotune/set');
    assert.equal(topics.loopCommand('room', 'tuning'), 'homeostat/pi-1/room/tuning/set');
  });

  test('a multi-level base topic is kept as it is', () => {
    assert.equal(topicsFor('home/climate', 'n').loopState('a'), 'home/climate/n/a/state');
  });

  describe('parseCommandTopic recognises exactly the eight command topics', () => {
    const table: [topic: string, expected: { loop: string; kind: CommandKind } | undefined][] = [
      ['homeostat/pi-1/room/setpoint/set', { loop: 'room', kind: 'setpoint' }],
      ['homeostat/pi-1/room/mode/set', { loop: 'room', kind: 'mode' }],
      ['homeostat/pi-1/room/set', { loop: 'room', kind: 'json' }],
      ['homeostat/pi-1/room/fault/reset', { loop: 'room', kind: 'faultReset' }],
      ['homeostat/pi-1/room/autotune/set', { loop: 'room', kind: 'autotune' }],
      ['homeostat/pi-1/room/tuning/set', { loop: 'room', kind: 'tuning' }],
      ['homeostat/pi-1/room/preset/set', { loop: 'room', kind: 'preset' }],
      ['homeostat/pi-1/room/profile/set', { loop: 'room', kind: 'profile' }],
      ['homeostat/pi-1/room/preset', undefined],
      ['homeostat/pi-1/room/profile/set/x', undefined],
      ['homeostat/pi-1/fermenter_2/set', { loop: 'fermenter_2', kind: 'json' }],
      // A loop may be called like a command level: the first level after the base is the loop.
      ['homeostat/pi-1/autotune/set', { loop: 'autotune', kind: 'json' }],
      ['homeostat/pi-1/tuning/autotune/set', { loop: 'tuning', kind: 'autotune' }],
      // What we publish ourselves is not a command.
      ['homeostat/pi-1/room/state', undefined],
      ['homeostat/pi-1/room/result', undefined],
      ['homeostat/pi-1/availability', undefined],
      // Near misses.
      ['homeostat/pi-1/room/fault/set', undefined],
      ['homeostat/pi-1/room/autotune', undefined],
      ['homeostat/pi-1/room/autotune/start', undefined],
      ['homeostat/pi-1/room/tunings/set', undefined],
      ['homeostat/pi-1/room/tuning/set/latest', undefined],
      ['homeostat/pi-1/room/setpoint', undefined],
      ['homeostat/pi-1/room/setpoint/set/extra', undefined],
      ['homeostat/pi-1//set', undefined],
      ['homeostat/pi-1/set', undefined],
      ['homeostat/pi-2/room/set', undefined],
      ['homeostat/pi-10/room/set', undefined],
      ['other/pi-1/room/set', undefined],
      ['homeostat/pi-1/ro+om/set', undefined],
      ['homeostat/pi-1/a b/set', undefined],
    ];
    for (const [topic, expected] of table) {
      test(`${topic} → ${expected ? `${expected.loop} ${expected.kind}` : 'not a command'}`, () => {
        assert.deepEqual(topics.parseCommandTopic(topic), expected);
      });
    }
  });

  test('the subscription filters match every command topic and nothing else of ours', () => {
    const commands = [
      topics.loopCommand('room', 'setpoint'),
      topics.loopCommand('room', 'mode'),
      topics.loopCommand('room', 'json'),
      topics.loopCommand('room', 'faultReset'),
      topics.loopCommand('room', 'autotune'),
      topics.loopCommand('room', 'tuning'),
      topics.loopCommand('room', 'preset'),
      topics.loopCommand('room', 'profile'),
    ];
    const ours = [topics.availability, topics.loopState('room'), topics.loopResult('room')];
    for (const topic of commands) {
      assert.ok(
        topics.commandSubscription.some((f) => matches(f, topic)),
        `${topic} is not subscribed`,
      );
    }
    for (const topic of ours) {
      assert.ok(!topics.commandSubscription.some((f) => matches(f, topic)), `${topic} would come back to us`);
    }
    assert.deepEqual(topics.commandSubscription, [
      'homeostat/pi-1/+/setpoint/set',
      'homeostat/pi-1/+/mode/set',
      'homeostat/pi-1/+/set',
      'homeostat/pi-1/+/fault/reset',
      'homeostat/pi-1/+/autotune/set',
      'homeostat/pi-1/+/tuning/set',
      'homeostat/pi-1/+/preset/set',
      'homeostat/pi-1/+/profile/set',
    ]);
  });

  test('every topic a filter can deliver parses as a command', () => {
    for (const filter of topics.commandSubscription) {
      const topic = filter.replace('+', 'some_loop');
      assert.equal(topics.parseCommandTopic(topic)?.loop, 'some_loop', filter);
    }
  });
});

describe('unsafe ids and base topics are refused', () => {
  const badIds = ['', '+', '#', 'a/b', 'a+', 'x#', 'a b', 'a\u0000b'];
  for (const id of badIds) {
    test(`node id ${JSON.stringify(id)}`, () => {
      assert.throws(() => topicsFor('homeostat', id), /node id/);
    });
    test(`loop id ${JSON.stringify(id)}`, () => {
      assert.throws(() => topicsFor('homeostat', 'n').loopState(id), /loop id/);
    });
  }
  const badBases = ['', '+', 'home/#', 'a//b', '/homeostat', 'homeostat/', '$SYS', 'a\u0000'];
  for (const base of badBases) {
    test(`base topic ${JSON.stringify(base)}`, () => {
      assert.throws(() => topicsFor(base, 'n'), /base topic/);
    });
  }
  test('a plain prefix passes assertPlainTopic', () => {
    assert.doesNotThrow(() => assertPlainTopic('discovery prefix', 'homeassistant'));
    assert.throws(() => assertPlainTopic('discovery prefix', 'home+'), /discovery prefix "home\+"/);
  });
});
