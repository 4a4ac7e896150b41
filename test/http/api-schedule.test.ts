/**
 * POST /api/loops/{loop}/preset and /profile on a real node (the demo config with
 * presets on room and profiles on fermenter, SQLite file, ManualClock): the MQTT preset/set and
 * profile/set rules (the same parser), stored before the answer, source `http`; a refused write
 * changes nothing; statuses 200 / 404 / 422 / 429 / 503 like the other writes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiDeps } from '../../src/http/api-deps.js';
import { commandProfile, selectPreset } from '../../src/http/api-write.js';
import type { CommandResult, EventView } from '../../src/operations/schemas.js';
import { demoConfigText } from '../support/config.js';
import { type ApiTestNode, getJson, postJson, startApiNode } from './support.js';

const text = demoConfigText((doc) => {
  doc.setIn(
    ['loops', 'room', 'presets'],
    doc.createNode({ comfort: { setpoint: 21.5 }, eco: { setpoint: 17 } }),
  );
  doc.setIn(
    ['loops', 'fermenter', 'profiles'],
    doc.createNode({
      ale: {
        steps: [
          { holdS: 345600, setpoint: 18 },
          { rampS: 172800, to: 21 },
        ],
      },
    }),
  );
});

const start = (t: Parameters<typeof startApiNode>[0]) => startApiNode(t, { text });

/** What a refused write must leave as it was: the stored desired rows and the event log. */
async function snapshot(node: ApiTestNode) {
  const events = await getJson<{ events: EventView[] }>(node.base, '/api/events?limit=1000');
  const kinds = events.body.events.filter((e) => e.kind !== 'command-rejected' && e.kind !== 'actuator');
  return {
    room: node.store.desired.desired('room'),
    fermenter: node.store.desired.desired('fermenter'),
    events: kinds,
  };
}

describe('POST /api/loops/{loop}/preset', () => {
  test('{"preset":"eco"}: 200 with the new generation and changed, stored before the answer; again: 200, changed false, same generation', async (t) => {
    const node = await start(t);
    const first = await postJson<CommandResult>(node.base, '/api/loops/room/preset', {
      preset: 'eco',
      requestId: 'h1',
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      { ...first.body, generation: typeof first.body.generation },
      { loop: 'room', accepted: true, generation: 'number', requestId: 'h1', changed: true },
    );
    assert.equal(node.store.desired.desired('room')?.preset, 'eco');
    assert.equal(node.store.desired.desired('room')?.generation, first.body.generation);
    const again = await postJson<CommandResult>(node.base, '/api/loops/room/preset', { preset: 'eco' });
    assert.deepEqual(
      [again.status, again.body.changed, again.body.generation],
      [200, false, first.body.generation],
    );
    const none = await postJson<CommandResult>(node.base, '/api/loops/room/preset', { preset: null });
    assert.deepEqual([none.status, none.body.changed], [200, true]);
    assert.equal(node.store.desired.desired('room')?.preset, undefined);
  });

  const refused: [what: string, path: string, body: unknown, status: number, reason: RegExp][] = [
    [
      'an unknown preset',
      '/api/loops/room/preset',
      { preset: 'away' },
      422,
      /^unknown preset "away" \(known: comfort, eco, or none\)$/,
    ],
    [
      'a loop without presets',
      '/api/loops/fermenter/preset',
      { preset: 'eco' },
      422,
      /^loop fermenter has no presets/,
    ],
    ['an unknown loop', '/api/loops/attic/preset', { preset: 'eco' }, 404, /^unknown loop "attic"$/],
    ['an empty body', '/api/loops/room/preset', '', 422, /empty payload/],
    ['a body that is not JSON', '/api/loops/room/preset', '{"preset": ', 422, /payload is not JSON/],
    [
      'an unknown key',
      '/api/loops/room/preset',
      { preset: 'eco', setpoint: 3 },
      422,
      /invalid preset command/,
    ],
  ];
  for (const [what, path, body, status, reason] of refused) {
    test(`${what}: ${status} with the reason, nothing stored`, async (t) => {
      const node = await start(t);
      const before = await snapshot(node);
      const answer = await postJson<CommandResult>(node.base, path, body);
      assert.equal(answer.status, status);
      assert.equal(answer.body.accepted, false);
      assert.match(answer.body.reason ?? '', reason);
      assert.deepEqual(await snapshot(node), before);
    });
  }

  test('the change budget is the loop’s: after 10 changes, 429 and nothing stored', async (t) => {
    const node = await start(t);
    for (let i = 0; i < 10; i++) {
      const preset = i % 2 === 0 ? 'eco' : 'comfort';
      assert.equal(
        (await postJson(node.base, '/api/loops/room/preset', { preset })).status,
        200,
        `change ${i + 1}`,
      );
    }
    const before = await snapshot(node);
    const limited = await postJson<CommandResult>(node.base, '/api/loops/room/preset', { preset: 'eco' });
    assert.equal(limited.status, 429);
    assert.match(limited.body.reason ?? '', /^too many changes: loop room/);
    assert.deepEqual(await snapshot(node), before);
  });
});

describe('POST /api/loops/{loop}/profile', () => {
  test('start, pause, resume, stop: 200 each, stored with its generation; a second stop changes nothing', async (t) => {
    const node = await start(t);
    const path = '/api/loops/fermenter/profile';
    const started = await postJson<CommandResult>(node.base, path, { action: 'start', name: 'ale' });
    assert.deepEqual([started.status, started.body.changed], [200, true]);
    assert.equal(node.store.desired.desired('fermenter')?.profileRun?.name, 'ale');
    await node.clock.advance(60_000);
    assert.equal((await postJson(node.base, path, { action: 'pause' })).status, 200);
    assert.notEqual(node.store.desired.desired('fermenter')?.profileRun?.pausedAtMs, undefined);
    assert.equal((await postJson(node.base, path, { action: 'resume' })).status, 200);
    const stopped = await postJson<CommandResult>(node.base, path, { action: 'stop' });
    assert.deepEqual([stopped.status, stopped.body.changed], [200, true]);
    assert.equal(node.store.desired.desired('fermenter')?.profileRun, undefined);
    const again = await postJson<CommandResult>(node.base, path, { action: 'stop' });
    assert.deepEqual(
      [again.status, again.body.changed, again.body.generation],
      [200, false, stopped.body.generation],
    );
  });

  const refused: [what: string, path: string, body: unknown, status: number, reason: RegExp][] = [
    [
      'an unknown profile',
      '/api/loops/fermenter/profile',
      { action: 'start', name: 'lager' },
      422,
      /^unknown profile "lager" \(known: ale\)$/,
    ],
    [
      'a loop without profiles',
      '/api/loops/room/profile',
      { action: 'start', name: 'ale' },
      422,
      /^loop room has no profiles/,
    ],
    [
      'a start without a name',
      '/api/loops/fermenter/profile',
      { action: 'start' },
      422,
      /a start needs the profile/,
    ],
    [
      'an unknown action',
      '/api/loops/fermenter/profile',
      { action: 'toggle' },
      422,
      /invalid profile command: action/,
    ],
    ['an unknown loop', '/api/loops/attic/profile', { action: 'stop' }, 404, /^unknown loop "attic"$/],
  ];
  for (const [what, path, body, status, reason] of refused) {
    test(`${what}: ${status} with the reason, nothing stored`, async (t) => {
      const node = await start(t);
      const before = await snapshot(node);
      const answer = await postJson<CommandResult>(node.base, path, body);
      assert.equal(answer.status, status);
      assert.match(answer.body.reason ?? '', reason);
      assert.deepEqual(await snapshot(node), before);
    });
  }
});

describe('statuses of the answers (the command path’s refusal decides)', () => {
  const table: [refusal: string | undefined, known: boolean, status: number][] = [
    [undefined, true, 200],
    ['invalid', true, 422],
    ['unknown-loop', false, 404],
    ['rate-limited', true, 429],
    ['not-stored', true, 503],
  ];
  for (const [refusal, known, status] of table) {
    test(`${refusal ?? 'accepted'} → ${status}, for both writes, with the kind handed to the command path`, () => {
      const kinds: string[] = [];
      const deps = {
        nowMs: () => 0,
        submit: (command: { kind: string }) => {
          kinds.push(command.kind);
          return refusal === undefined
            ? { known, outcome: { accepted: true }, generation: 3, changed: true }
            : { known, outcome: { accepted: false, reason: 'why' }, refusal };
        },
      } as unknown as ApiDeps;
      assert.equal(selectPreset(deps, 'room', Buffer.from('{"preset":"eco"}')).status, status);
      assert.equal(commandProfile(deps, 'room', Buffer.from('{"action":"stop"}')).status, status);
      assert.deepEqual(kinds, ['preset', 'profile']);
    });
  }
});
