/**
 * `homeostat history --csv` against a daemon answering with recorded series (the API's
 * `recorded`): the CLI as a child process, a stand-in API per the contract; the CSV
 * gains a column per series. The columns themselves: history-csv.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli } from '../integration/helpers.js';
import { minimalSimConfigText } from '../support/config.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi } from './fake-api.js';

test('given a history answer with a recorded series, when history --csv, then its column follows the loop columns, a gap an empty cell', async (t) => {
  const point = {
    at: '2026-11-30T11:00:00.000Z',
    measured: 19.25,
    setpoint: 21,
    output: 0.5,
    action: 'heating',
  };
  const next = { ...point, at: '2026-11-30T11:01:00.000Z' };
  const outdoor = {
    sensor: 'outside',
    label: 'outdoor',
    unit: '°C',
    points: [
      { at: point.at, value: 4.5 },
      { at: next.at, value: null },
    ],
  };
  const body = {
    loop: 'room',
    from: '2026-11-30T09:00:00Z',
    to: '2026-11-30T11:30:00Z',
    downsampled: false,
    points: [point, next],
    recorded: [outdoor],
  };
  const server = await fakeApi(t, () => ({ status: 200, body }));
  const file = path.join(tempDir(t, 'homeostat-cli-recorded-'), 'config.yaml');
  writeFileSync(file, minimalSimConfigText({ extra: `http: { port: ${server.port} }` }));
  const result = await runCli(['history', 'room', '--csv', '--config', file]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.stdout.trim().split('\n'), [
    'time,setpoint,measured,output,action,resolution_s,outdoor_°C',
    '2026-11-30T11:00:00.000Z,21,19.25,0.5,heating,,4.5',
    '2026-11-30T11:01:00.000Z,21,19.25,0.5,heating,,',
  ]);
});
