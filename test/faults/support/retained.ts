import assert from 'node:assert/strict';
import type YAML from 'yaml';
import type { CliProcess } from '../../integration/helpers.js';
import { resultTopic, stateTopic } from './config.js';
import { condition, parseJson, type ResultPayload, type TestMqtt } from './mqtt.js';
import type { Verdicts } from './scenario.js';

/**
 * The room's heater barely warms it (gain 0.5 °C): full output without effect latches "heating
 * ineffective" within 3 s, so a scenario can check that a replayed or queued fault reset does
 * not clear it.
 */
export function latchingRoom(doc: YAML.Document): void {
  doc.setIn(['actuators', 'room_heater', 'gain'], 0.5);
  doc.setIn(['actuators', 'room_heater', 'minOnS'], 0);
  doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
  doc.setIn(['sensors', 'room_temp', 'periodS'], 1);
  doc.setIn(['loops', 'room', 'effectWatch'], { periodS: 3, minChange: 1 });
}

/**
 * After a restart with commands left retained: the results of `loops` since `sinceMs` are
 * exactly `count` refusals as retained replays, the room's latch holds and its heater never
 * switched on. Returns the results and the heater's ON lines for the figures.
 */
export function checkReplaysRefused(
  v: Verdicts,
  seen: { client: TestMqtt; run: CliProcess },
  opts: { loops: string[]; sinceMs: number; count: number },
): { results: ResultPayload[]; heaterOn: string[] } {
  const topics = new Set(opts.loops.map(resultTopic));
  const results = seen.client.received
    .filter((m) => m.atMs >= opts.sinceMs && topics.has(m.topic))
    .map((m) => parseJson<ResultPayload>(m.payload)!);
  v.check(`${opts.count} results, all refused as retained replays`, () => {
    assert.equal(results.length, opts.count, JSON.stringify(results));
    for (const r of results) {
      assert.equal(r.accepted, false, JSON.stringify(r));
      assert.match(r.reason ?? '', /retain/i);
    }
  });
  v.check('the latch holds', () =>
    assert.equal(
      condition(seen.client.latestState(stateTopic('room')), 'Faulted')?.reason,
      'LatchedHeatingIneffective',
    ),
  );
  const heaterOn = seen.run.filter((l) => /^room_heater → ON/.test(l.msg)).map((l) => l.msg);
  v.check('the heater never switched on after the restart', () => assert.deepEqual(heaterOn, []));
  return { results, heaterOn };
}
