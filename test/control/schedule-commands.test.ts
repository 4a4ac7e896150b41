/**
 * The preset and profile commands on the shared command path (DesiredCommands), as a
 * specification: a real DesiredStore on a temporary SQLite file (selectPreset, profileCommand),
 * a fake daemon that records the cycles it is asked for, and a change limit of 3 at once (1 per
 * minute after). Loops:
 * - `living`: presets comfort (21.5) and eco (17, mode heat); no profiles;
 * - `fermenter`: profiles ale and lager; no presets;
 * - `plain`: neither.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { CommandAnswer } from '../../src/control/desired-commands.js';
import { applyConfig } from '../../src/daemon/store.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { commandPath, storeOnFile } from '../support/commands.js';
import { validConfig } from '../support/config.js';

const TEXT = `
version: 1
node: { id: pi }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
    q: { ambient: 10, timeConstantS: 600 }
    r: { ambient: 10, timeConstantS: 600 }
sensors:
  t: { kind: simulated, plant: p }
  u: { kind: simulated, plant: q }
  v: { kind: simulated, plant: r }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 }
  heater2: { kind: simulated_relay, plant: q, gain: 20 }
  heater3: { kind: simulated_relay, plant: r, gain: 20 }
loops:
  living:
    sensor: t
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
    presets:
      comfort: { setpoint: 21.5 }
      eco: { setpoint: 17, mode: heat }
  fermenter:
    sensor: u
    raise: heater2
    setpoint: 18
    limits: { min: 0, max: 30 }
    controller: { type: pid, kp: 0.5 }
    profiles:
      ale: { steps: [{ holdS: 345600, setpoint: 18 }, { rampS: 172800, to: 21 }] }
      lager: { steps: [{ holdS: 86400, setpoint: 10 }] }
  plain:
    sensor: v
    raise: heater3
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
`;
const LIMIT = { burst: 3, perMinute: 1 };

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function given(opts: { failing?: string[] } = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = validConfig(TEXT);
  const store = storeOnFile(clock, cleanups);
  applyConfig(store, config, TEXT);
  const path = commandPath({ config, desired: store.desired, clock, changeLimit: LIMIT, ...opts });
  cleanups.push(() => path.commands.stop());
  return { clock, config, store, ...path };
}

function reasonOf(answer: CommandAnswer): string {
  return answer.outcome.accepted ? '' : answer.outcome.reason;
}

describe('preset', () => {
  test('given a loop with presets, when eco is selected, then it is stored with the next generation before the answer and the loop is woken', () => {
    const h = given();
    const before = h.row('living').generation;
    const answer = h.send('preset', 'eco', 'living');
    assert.deepEqual(answer.outcome, { accepted: true, change: { preset: 'eco' } });
    assert.equal(answer.changed, true);
    assert.ok(answer.generation! > before);
    assert.equal(h.row('living').preset, 'eco');
    assert.equal(h.row('living').generation, answer.generation, 'stored before the answer');
    assert.deepEqual(h.triggers, [{ loop: 'living', reason: 'mqtt preset' }]);
  });

  test('when the same selection arrives again (QoS 1 duplicate), then it is accepted, changes nothing and wakes nothing', () => {
    const h = given();
    const first = h.send('preset', 'eco', 'living');
    const again = h.send('preset', 'eco', 'living');
    assert.equal(again.outcome.accepted, true);
    assert.equal(again.changed, false);
    assert.equal(again.generation, first.generation);
    assert.equal(h.triggers.length, 1);
  });

  test('when "none" arrives (Home Assistant clearing the preset), then the preset is cleared', () => {
    const h = given();
    h.send('preset', 'comfort', 'living');
    const answer = h.send('preset', 'none', 'living');
    assert.deepEqual(answer.outcome, { accepted: true, change: { preset: null } });
    assert.equal(answer.changed, true);
    assert.equal(h.row('living').preset, undefined);
  });

  test('the set JSON command selects a preset through the same path (source http)', () => {
    const h = given();
    const answer = h.send('json', '{"preset": "comfort", "requestId": "j1"}', 'living', 'http');
    assert.deepEqual(answer.outcome, { accepted: true, change: { preset: 'comfort' }, requestId: 'j1' });
    assert.equal(h.row('living').preset, 'comfort');
    assert.deepEqual(h.triggers, [{ loop: 'living', reason: 'http set' }]);
  });

  const refusals: [what: string, loop: string, payload: string, refusal: string, reason: RegExp][] = [
    [
      'an unknown preset (the known ones listed)',
      'living',
      'ecco',
      'invalid',
      /^unknown preset "ecco" \(known: comfort, eco, or none\)$/,
    ],
    [
      'a loop without presets',
      'plain',
      'eco',
      'invalid',
      /^loop plain has no presets: add them under loops\.plain\.presets/,
    ],
    ['"none" on a loop without presets', 'plain', 'none', 'invalid', /has no presets/],
    ['an unknown loop', 'attic', 'eco', 'unknown-loop', /^unknown loop "attic"$/],
    ['an empty payload (a retained message cleared)', 'living', '', 'invalid', /empty payload/],
    [
      'a name inherited from Object.prototype',
      'living',
      'constructor',
      'invalid',
      /unknown preset "constructor"/,
    ],
  ];
  for (const [what, loop, payload, refusal, reason] of refusals) {
    test(`${what} is refused, changes nothing and wakes nothing`, () => {
      const h = given();
      const before = h.store.desired.desired(loop);
      const answer = h.send('preset', payload, loop);
      assert.equal(answer.outcome.accepted, false);
      assert.equal(answer.refusal, refusal);
      assert.match(reasonOf(answer), reason);
      assert.deepEqual(h.store.desired.desired(loop), before);
      assert.equal(answer.generation, before?.generation);
      assert.deepEqual(h.triggers, []);
    });
  }

  test('duplicates cost nothing from the change budget; beyond it, a selection is refused (429 over HTTP) and not stored', () => {
    const h = given();
    for (const name of ['eco', 'eco', 'comfort', 'comfort', 'eco']) h.send('preset', name, 'living');
    assert.equal(h.row('living').preset, 'eco');
    const fourth = h.send('preset', 'comfort', 'living');
    assert.equal(fourth.refusal, 'rate-limited');
    assert.match(reasonOf(fourth), /too many changes: loop living/);
    assert.equal(h.row('living').preset, 'eco');
  });

  test('when the store does not take the write, the selection is refused as not stored (503), with the unchanged generation', () => {
    const h = given({ failing: ['selectPreset'] });
    const before = h.row('living').generation;
    const answer = h.send('preset', 'eco', 'living');
    assert.equal(answer.refusal, 'not-stored');
    assert.match(reasonOf(answer), /^not stored: database or disk is full$/);
    assert.equal(answer.generation, before);
    assert.deepEqual(h.triggers, []);
  });
});

describe('profile', () => {
  test('start, pause, resume and stop: each stored with its generation, each waking the loop', async () => {
    const h = given();
    const start = h.send('profile', 'start ale', 'fermenter');
    assert.deepEqual(start.outcome, {
      accepted: true,
      change: { profile: { action: 'start', name: 'ale' } },
    });
    assert.equal(start.changed, true);
    assert.equal(h.row('fermenter').profileRun?.name, 'ale');
    assert.equal(h.row('fermenter').profileRun?.startedAtMs, h.clock.nowMs());
    await h.clock.advance(60_000);
    const pause = h.send('profile', 'pause', 'fermenter');
    assert.equal(pause.changed, true);
    assert.equal(h.row('fermenter').profileRun?.pausedAtMs, h.clock.nowMs());
    await h.clock.advance(60_000);
    const resume = h.send('profile', '{"action":"resume","requestId":"p3"}', 'fermenter', 'http');
    assert.deepEqual([resume.changed, resume.outcome.requestId], [true, 'p3']);
    assert.equal(h.row('fermenter').profileRun?.pausedAtMs, undefined);
    assert.equal(h.row('fermenter').profileRun?.pausedTotalMs, 60_000);
    await h.clock.advance(60_000);
    const stop = h.send('profile', 'stop', 'fermenter');
    assert.equal(stop.changed, true);
    assert.equal(h.row('fermenter').profileRun, undefined);
    const generations = [start, pause, resume, stop].map((a) => a.generation!);
    assert.deepEqual(
      generations,
      [...generations].sort((a, b) => a - b),
    );
    assert.equal(new Set(generations).size, 4);
    assert.deepEqual(
      h.triggers.map((t) => t.reason),
      ['mqtt profile', 'mqtt profile', 'http profile', 'mqtt profile'],
    );
  });

  test('a second pause, a stop with nothing started, a duplicate start: accepted, nothing changed, nothing woken', () => {
    const h = given();
    assert.equal(h.send('profile', 'stop', 'fermenter').changed, false);
    h.send('profile', 'start ale', 'fermenter');
    h.send('profile', 'pause', 'fermenter');
    const triggers = h.triggers.length;
    const again = h.send('profile', 'pause', 'fermenter');
    assert.deepEqual([again.outcome.accepted, again.changed], [true, false]);
    assert.equal(h.send('profile', 'start ale', 'fermenter').changed, false);
    assert.equal(h.triggers.length, triggers);
  });

  const refusals: [what: string, loop: string, payload: string, refusal: string, reason: RegExp][] = [
    [
      'an unknown profile (the known ones listed)',
      'fermenter',
      'start ael',
      'invalid',
      /^unknown profile "ael" \(known: ale, lager\)$/,
    ],
    [
      'a loop without profiles',
      'living',
      'start ale',
      'invalid',
      /^loop living has no profiles: add them under loops\.living\.profiles/,
    ],
    ['a pause on a loop without profiles', 'plain', 'pause', 'invalid', /has no profiles/],
    ['an unknown action', 'fermenter', 'restart', 'invalid', /^profile takes "start NAME"/],
    ['an unknown loop', 'attic', 'stop', 'unknown-loop', /^unknown loop "attic"$/],
    ['an empty payload', 'fermenter', '', 'invalid', /profile takes/],
  ];
  for (const [what, loop, payload, refusal, reason] of refusals) {
    test(`${what} is refused, changes nothing and wakes nothing`, () => {
      const h = given();
      const before = h.store.desired.desired(loop);
      const answer = h.send('profile', payload, loop);
      assert.equal(answer.outcome.accepted, false);
      assert.equal(answer.refusal, refusal);
      assert.match(reasonOf(answer), reason);
      assert.deepEqual(h.store.desired.desired(loop), before);
      assert.deepEqual(h.triggers, []);
    });
  }

  test('stop of a started profile removed from the config (the loop has no profiles left) is accepted and clears the run', () => {
    const h = given();
    h.send('profile', 'start ale', 'fermenter');
    // The reloaded config dropped every profile of the loop; the run stays stored.
    delete (h.config.loops.fermenter as { profiles?: unknown }).profiles;
    const stop = h.send('profile', 'stop', 'fermenter');
    assert.deepEqual([stop.outcome.accepted, stop.changed], [true, true]);
    assert.equal(h.row('fermenter').profileRun, undefined);
    // Nothing stored: the loop still has no profiles to command.
    const again = h.send('profile', 'stop', 'fermenter');
    assert.match(reasonOf(again), /has no profiles/);
    assert.match(reasonOf(h.send('profile', 'start ale', 'fermenter')), /has no profiles/);
  });

  test('a refused command is noted in the rejection log, named by its kind', () => {
    const h = given();
    h.send('profile', 'start ael', 'fermenter');
    const warnings = h.log.messages(40);
    assert.ok(
      warnings.some((m) => /mqtt profile rejected: unknown profile "ael"/.test(m)),
      JSON.stringify(warnings),
    );
  });
});
