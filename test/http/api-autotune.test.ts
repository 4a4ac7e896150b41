/**
 * The autotune and tuning routes on a real node (demo config, SQLite file, ManualClock):
 * POST /api/loops/{loop}/autotune and /tuning take the MQTT commands' payloads (same parser,
 * stored before the answer, source http), GET /api/loops/{loop}/tunings lists the stored ones.
 * Demo loops: room (PID, heater, heat), fermenter (PID, heater and cooler, heat_cool).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { liveStatusCommand } from '../../src/commands/api-inspect.js';
import { toTuningView } from '../../src/http/views.js';
import {
  type CommandResult,
  type EventView,
  type TuningsResponse,
  tuningView,
} from '../../src/operations/schemas.js';
import { type ApiTestNode, getJson, postJson, rawRequest, startApiNode } from './support.js';

const MODEL = {
  gain: 20,
  timeConstantS: 3600,
  deadTimeS: 120,
  ambient: 10,
  standardError: { gain: 0.5, timeConstantS: 90, deadTimeS: Number.NaN },
  rmsResidual: 0.04,
};

/** Two proposals on room: version 1 (by hand) and version 2 (an autotune's, with its model). */
function proposeTwo(node: ApiTestNode): void {
  node.store.desired.recordTuning(
    'room',
    { gains: { kp: 0.5, tiS: 900, tdS: 0 } },
    { apply: false, source: 'manual', by: 'cli' },
  );
  node.store.desired.recordTuning(
    'room',
    { gains: { kp: 0.75, tiS: 960, tdS: 40 }, model: MODEL, details: { cycles: 3 } },
    { apply: false, source: 'autotune' },
  );
}

async function events(node: ApiTestNode, kind: string): Promise<EventView[]> {
  return (await getJson<{ events: EventView[] }>(node.base, `/api/events?kind=${kind}`)).body.events;
}

describe('POST /api/loops/{loop}/autotune', () => {
  test('{}: 200 with the new generation, the start stored with source http, autotune-requested recorded', async (t) => {
    const node = await startApiNode(t);
    const before = node.store.desired.desired('room')!.generation;
    const { status, body } = await postJson<CommandResult>(node.base, '/api/loops/room/autotune', {});
    assert.equal(status, 200);
    assert.deepEqual(body, { loop: 'room', accepted: true, generation: before + 1 });
    assert.deepEqual(node.store.desired.desired('room')?.autotuneRequest, {
      action: 'start',
      atMs: node.clock.nowMs(),
      generation: before + 1,
      options: {},
    });
    assert.deepEqual(
      (await events(node, 'autotune-requested')).map((e) => [e.loop, e.source]),
      [['room', 'http']],
    );
  });

  test('a side and durations on a two-sided loop, with a requestId: 200, echoed, the options stored', async (t) => {
    const node = await startApiNode(t);
    const { status, body } = await postJson<CommandResult>(node.base, '/api/loops/fermenter/autotune', {
      action: 'start',
      side: 'lower',
      closedLoopS: 120,
      maxDurationS: 21_600,
      requestId: 'tune-1',
    });
    assert.deepEqual([status, body.accepted, body.requestId], [200, true, 'tune-1']);
    assert.deepEqual(node.store.desired.desired('fermenter')?.autotuneRequest?.options, {
      side: 'lower',
      closedLoopS: 120,
      maxDurationS: 21_600,
    });
  });

  const refused: [name: string, loop: string, body: unknown, status: number, reason: RegExp][] = [
    ['heat_cool without a side', 'fermenter', {}, 422, /^mode heat_cool has two sides/],
    ['a side without an actuator', 'room', { side: 'lower' }, 422, /^the loop has no actuator to lower/],
    ['an unknown key', 'room', { side: 'raise', cycles: 3 }, 422, /invalid autotune command/],
    ['a duration of 0 (never clamped)', 'room', { maxDurationS: 0 }, 422, /maxDurationS must be/],
    ['a cancel with options', 'room', { action: 'cancel', side: 'raise' }, 422, /a cancel takes no options/],
    ['an unknown loop', 'attic', {}, 404, /^unknown loop "attic"$/],
  ];
  for (const [name, loop, body, status, reason] of refused) {
    test(`${name}: ${status} with the reason, nothing stored`, async (t) => {
      const node = await startApiNode(t);
      const before = node.store.desired.desired(loop);
      const answer = await postJson<CommandResult>(node.base, `/api/loops/${loop}/autotune`, body);
      assert.equal(answer.status, status);
      assert.equal(answer.body.accepted, false);
      assert.match(answer.body.reason ?? '', reason);
      assert.deepEqual(node.store.desired.desired(loop), before);
      assert.deepEqual(await events(node, 'autotune-requested'), []);
    });
  }

  test('the loop off: 422 "the loop is off"', async (t) => {
    const node = await startApiNode(t);
    assert.equal((await postJson(node.base, '/api/loops/room', { mode: 'off' })).status, 200);
    const answer = await postJson<CommandResult>(node.base, '/api/loops/room/autotune', {});
    assert.deepEqual([answer.status, answer.body.reason?.startsWith('the loop is off')], [422, true]);
  });

  test('cancel with no run requested: 200, same generation, nothing recorded; after a start, stored', async (t) => {
    const node = await startApiNode(t);
    const generation = node.store.desired.desired('room')!.generation;
    const idle = await postJson<CommandResult>(node.base, '/api/loops/room/autotune', { action: 'cancel' });
    assert.deepEqual([idle.status, idle.body.accepted, idle.body.generation], [200, true, generation]);
    assert.deepEqual(await events(node, 'autotune-cancel-requested'), []);

    await postJson(node.base, '/api/loops/room/autotune', {});
    const cancel = await postJson<CommandResult>(node.base, '/api/loops/room/autotune', { action: 'cancel' });
    assert.deepEqual([cancel.status, cancel.body.generation], [200, generation + 2]);
    assert.equal(node.store.desired.desired('room')?.autotuneRequest?.action, 'cancel');
  });

  test('a body that is not application/json: 415, nothing stored (the writes’ rules, reused)', async (t) => {
    const node = await startApiNode(t);
    const answer = await rawRequest(`${node.base}/api/loops/room/autotune`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'start',
    });
    assert.equal(answer.status, 415);
    assert.equal(node.store.desired.desired('room')?.autotuneRequest, undefined);
  });
});

describe('POST /api/loops/{loop}/tuning and GET /api/loops/{loop}/tunings', () => {
  test('no tunings: GET answers active "config" and an empty list; "latest" is 422 with what to do', async (t) => {
    const node = await startApiNode(t);
    const list = await getJson<TuningsResponse>(node.base, '/api/loops/room/tunings');
    assert.deepEqual([list.status, list.body], [200, { loop: 'room', active: 'config', tunings: [] }]);
    const latest = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', { version: 'latest' });
    assert.equal(latest.status, 422);
    assert.match(latest.body.reason ?? '', /^no stored tuning to accept: run an autotune first/);
  });

  test('"latest" accepts version 2: 200 changed true, in force, listed as active with its model (unknown errors null)', async (t) => {
    const node = await startApiNode(t);
    proposeTwo(node);
    const before = node.store.desired.desired('room')!.generation;
    const { status, body } = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', {
      version: 'latest',
      requestId: 'accept',
    });
    assert.equal(status, 200);
    assert.deepEqual(body, {
      loop: 'room',
      accepted: true,
      generation: before + 1,
      requestId: 'accept',
      changed: true,
    });
    assert.equal(node.store.desired.desired('room')?.tuning?.version, 2);
    assert.deepEqual(
      (await events(node, 'tuning-applied')).map((e) => [e.source, (e.data as { to: unknown }).to]),
      [['http', 2]],
    );

    const list = await getJson<TuningsResponse>(node.base, '/api/loops/room/tunings');
    assert.equal(list.status, 200);
    assert.equal(list.body.active, 2);
    assert.deepEqual(
      list.body.tunings.map((tuning) => [tuning.version, tuning.source, tuning.active]),
      [
        [2, 'autotune', true],
        [1, 'manual', false],
      ],
    );
    const [newest] = list.body.tunings;
    assert.deepEqual(newest?.gains, { kp: 0.75, tiS: 960, tdS: 40 });
    assert.deepEqual(newest?.model?.standardError, { gain: 0.5, timeConstantS: 90, deadTimeS: null });
    assert.deepEqual(newest?.details, { cycles: 3 });
    assert.equal(newest?.createdAt, new Date(node.clock.nowMs()).toISOString());
  });

  test('the version in force again: 200 changed false, same generation; version 1 restorable; "config" back to the file', async (t) => {
    const node = await startApiNode(t);
    proposeTwo(node);
    const first = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', { version: 2 });
    const again = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', { version: 2 });
    assert.deepEqual(
      [again.status, again.body.changed, again.body.generation],
      [200, false, first.body.generation],
    );
    const back = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', { version: 1 });
    assert.deepEqual([back.status, back.body.changed], [200, true]);
    const file = await postJson<CommandResult>(node.base, '/api/loops/room/tuning', { version: 'config' });
    assert.deepEqual([file.status, file.body.changed], [200, true]);
    const list = await getJson<TuningsResponse>(node.base, '/api/loops/room/tunings');
    assert.equal(list.body.active, 'config');
    assert.ok(list.body.tunings.every((tuning) => !tuning.active));
  });

  const refused: [name: string, loop: string, body: unknown, status: number, reason: RegExp][] = [
    ['an unknown version', 'room', { version: 9 }, 422, /^loop "room" has no tuning version 9$/],
    ['version 0', 'room', { version: 0 }, 422, /whole number from 1/],
    ['a version as text', 'room', { version: '2' }, 422, /must be a number, "latest" or "config"/],
    ['an unknown key', 'room', { version: 2, apply: true }, 422, /invalid tuning command/],
    ['an unknown loop', 'attic', { version: 'config' }, 404, /^unknown loop "attic"$/],
  ];
  for (const [name, loop, body, status, reason] of refused) {
    test(`${name}: ${status} with the reason, the tuning in force unchanged`, async (t) => {
      const node = await startApiNode(t);
      proposeTwo(node);
      const answer = await postJson<CommandResult>(node.base, `/api/loops/${loop}/tuning`, body);
      assert.deepEqual([answer.status, answer.body.accepted], [status, false]);
      assert.match(answer.body.reason ?? '', reason);
      assert.equal(node.store.desired.desired('room')?.tuning, undefined);
    });
  }

  test('GET tunings of an unknown loop: 404 naming the loops', async (t) => {
    const node = await startApiNode(t);
    const answer = await getJson<{ error: string }>(node.base, '/api/loops/attic/tunings');
    assert.equal(answer.status, 404);
    assert.match(answer.body.error, /^unknown loop "attic" \(loops: room, fermenter, greenhouse_humidity\)$/);
  });
});

describe('a tuning with a setpoint weight, as the API shows it', () => {
  const stored = {
    loop: 'room',
    version: 4,
    createdAtMs: Date.UTC(2026, 0, 1),
    source: 'autotune' as const,
    active: true,
    gains: { kp: 0.25, tiS: 480, tdS: 0, setpointWeight: 0.9 },
  };

  test('given gains with b, then the view carries it and the schema accepts it', () => {
    const view = toTuningView(stored);
    assert.deepEqual(view.gains, { kp: 0.25, tiS: 480, tdS: 0, setpointWeight: 0.9 });
    assert.equal(tuningView.safeParse(view).success, true);
  });

  test('given gains without b, then the view has no setpointWeight key', () => {
    const view = toTuningView({ ...stored, gains: { kp: 0.25, tiS: 480, tdS: 0 } });
    assert.deepEqual(Object.keys(view.gains), ['kp', 'tiS', 'tdS']);
  });
});

describe("a tuning with the lower side's own gains (split range), as the API shows it", () => {
  const stored = {
    loop: 'fermenter',
    version: 5,
    createdAtMs: Date.UTC(2026, 0, 1),
    source: 'autotune' as const,
    active: false,
    gains: { kp: 0.05, tiS: 3600, tdS: 0 },
    lowerGains: { kp: 0.5, tiS: 900, tdS: 10, setpointWeight: 0.7 },
  };

  test('given lower gains, then the view carries them beside the raise side’s and the schema accepts it', () => {
    const view = toTuningView(stored);
    assert.deepEqual(view.gains, { kp: 0.05, tiS: 3600, tdS: 0 });
    assert.deepEqual(view.lowerGains, { kp: 0.5, tiS: 900, tdS: 10, setpointWeight: 0.7 });
    assert.equal(tuningView.safeParse(view).success, true);
  });

  test('given no lower gains, then the view has no lowerGains key', () => {
    const { lowerGains: _none, ...oneSet } = stored;
    assert.equal('lowerGains' in toTuningView(oneSet), false);
  });
});

describe('homeostat status through the API, while an autotune runs', () => {
  test('the loop line shows its phase (autotune --no-wait says progress is there)', async (t) => {
    const node = await startApiNode(t);
    const { status } = await postJson<CommandResult>(node.base, '/api/loops/room/autotune', {});
    assert.equal(status, 200);
    await node.clock.advance(10_000);
    const lines: string[] = [];
    const code = await liveStatusCommand(
      { configPath: '/nonexistent.yaml', dbPath: '/nonexistent.db', apiUrl: node.base, json: false },
      (line) => lines.push(line),
      () => {},
    );
    assert.equal(code, 0);
    const room = lines.find((line) => line.startsWith('room  ')) ?? '';
    assert.match(room, / {2}autotune (noise|relay \d+\/\d+) {2}\[/, room);
  });
});
