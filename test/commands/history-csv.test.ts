/**
 * `homeostat history --csv` with recorded series (loops.<id>.record): one column per
 * series after the loop's, named `<label>_<unit>`; rows on the union of the loop's and the
 * series' times; an empty cell where there is no sample. From the API's answer (pure) and from
 * the database (a store file written as the daemon writes it).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CsvRecordedSeries, type HistoryRow, historyCsvLines } from '../../src/commands/history-csv.js';
import { historyCommand } from '../../src/commands/inspect.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';

const at = (minute: number, second = 0): string =>
  `2026-11-30T11:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;
const row = (minute: number, measured: number | null): HistoryRow => ({
  at: at(minute),
  setpoint: 21,
  measured,
  output: 0.5,
  action: 'heating',
});
const HEADER = 'time,setpoint,measured,output,action,resolution_s';

describe('history --csv: the recorded columns', () => {
  const cases: { name: string; rows: HistoryRow[]; recorded: CsvRecordedSeries[]; csv: string[] }[] = [
    {
      name: 'no recorded series: the loop columns alone, as without recording',
      rows: [row(0, 19.25), row(1, null)],
      recorded: [],
      csv: [HEADER, `${at(0)},21,19.25,0.5,heating,`, `${at(1)},21,,0.5,heating,`],
    },
    {
      name: 'a series at the loop times: its value in the loop row; a gap (null) an empty cell',
      rows: [row(0, 19.25), row(1, 19.5)],
      recorded: [
        {
          label: 'outdoor',
          unit: '°C',
          points: [
            { at: at(0), value: 4.5 },
            { at: at(1), value: null },
          ],
        },
      ],
      csv: [`${HEADER},outdoor_°C`, `${at(0)},21,19.25,0.5,heating,,4.5`, `${at(1)},21,19.5,0.5,heating,,`],
    },
    {
      name: 'two series on their own periods: rows on the union of the times, empty cells elsewhere',
      rows: [row(0, 19.25), row(1, 19.5)],
      recorded: [
        { label: 'outdoor', unit: '°C', points: [{ at: at(0, 30), value: -2 }] },
        {
          label: 'gravity',
          unit: 'SG',
          points: [
            { at: at(0), value: 1.0504 },
            { at: at(2), value: 1.0498 },
          ],
        },
      ],
      csv: [
        `${HEADER},outdoor_°C,gravity_SG`,
        `${at(0)},21,19.25,0.5,heating,,,1.0504`,
        `${at(0, 30)},,,,,,-2,`,
        `${at(1)},21,19.5,0.5,heating,,,`,
        `${at(2)},,,,,,,1.0498`,
      ],
    },
    {
      name: 'a label with a comma and a quote, a series without a unit: the header quoted, the unit left out',
      rows: [row(0, 19.25)],
      recorded: [
        { label: 'probe "b", top', unit: '°C', points: [{ at: at(0), value: 20.0625 }] },
        { label: 'battery', unit: '', points: [{ at: at(0), value: 4.1 }] },
      ],
      csv: [`${HEADER},"probe ""b"", top_°C",battery`, `${at(0)},21,19.25,0.5,heating,,20.0625,4.1`],
    },
    {
      name: 'a series without points: its column, empty',
      rows: [row(0, 19.25)],
      recorded: [{ label: 'outdoor', unit: '°C', points: [] }],
      csv: [`${HEADER},outdoor_°C`, `${at(0)},21,19.25,0.5,heating,,`],
    },
  ];
  for (const { name, rows, recorded, csv } of cases) {
    test(`given ${name}, then the CSV is exactly that`, () => {
      assert.deepEqual(historyCsvLines(rows, recorded), csv);
    });
  }
});

const T0 = Date.parse(at(0));
const CONFIG = `
version: 1
node: { id: pi }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
sensors:
  t: { kind: simulated, plant: p }
  outside: { kind: simulated, plant: p, staleAfterS: 120 }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 }
loops:
  room:
    sensor: t
    raise: heater
    setpoint: 21
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
    record:
      - { sensor: outside, label: outdoor }
`;

describe('history --csv from the database (no daemon answering)', () => {
  test('given loop samples and a recorded sensor flushed, then its column comes from the applied config, a gap where it went stale', (t) => {
    const { db, path } = tempStoreFile(t, () => T0);
    new DesiredStore(db, () => T0).applyConfig({
      text: CONFIG,
      loops: { room: { setpoint: 21, mode: 'heat', sectionHash: 'h' } },
    });
    const state = new StateStore(db);
    for (const minute of [0, 1, 5]) {
      state.addSample('room', {
        atMs: T0 + minute * 60_000,
        setpoint: 21,
        measured: 19.5,
        output: 0.5,
        action: 'heating',
      });
    }
    state.addRecorded('room', 'outside', { atMs: T0 + 30_000, value: 3.25 });
    state.addRecorded('room', 'outside', { atMs: T0 + 60_000, value: 3.5 });
    // Silent from minute 1 to minute 6: stale (staleAfterS 120) at minute 3.
    state.addRecorded('room', 'outside', { atMs: T0 + 6 * 60_000, value: 4 });
    state.flush();

    const lines: string[] = [];
    const code = historyCommand({ dbPath: path, loop: 'room', sinceMs: T0, csv: true }, (l) => lines.push(l));
    assert.equal(code, 0);
    assert.deepEqual(lines, [
      `${HEADER},outdoor_°C`,
      `${at(0)},21,19.5,0.5,heating,0,`,
      `${at(0, 30)},,,,,,3.25`,
      `${at(1)},21,19.5,0.5,heating,0,3.5`,
      `${at(3)},,,,,,`,
      `${at(5)},21,19.5,0.5,heating,0,`,
      `${at(6)},,,,,,4`,
      // Stale again two minutes after its last value, long before now (the end of the range).
      `${at(8)},,,,,,`,
    ]);
  });
});
