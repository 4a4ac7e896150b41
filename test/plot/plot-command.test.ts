import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type PlotOptions, plotCommand, plotDataOfApi } from '../../src/commands/plot.js';
import type { LoopView } from '../../src/operations/schemas.js';
import { seedHistory } from '../support/history.js';
import { tempDir } from '../support/tmp.js';
import { checkXml } from './xml-check.js';

const HOUR_MS = 3_600_000;

/** A database with a week of 10-s readings for room and fermenter, and the demo config (units, actuators). */
function seeded(t: { after(fn: () => void): void }): {
  dir: string;
  opts: (over: Partial<PlotOptions>) => PlotOptions;
} {
  const dir = tempDir(t);
  const dbPath = join(dir, 'history.db');
  const nowMs = Date.now();
  seedHistory(dbPath, ['room', 'fermenter'], nowMs);
  return {
    dir,
    opts: (over) => ({
      configPath: 'config/demo.yaml',
      dbPath,
      direct: true,
      loop: 'room',
      since: '6h',
      sinceMs: nowMs - 6 * HOUR_MS,
      outPath: join(dir, 'room.svg'),
      ...over,
    }),
  };
}

async function run(opts: PlotOptions): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await plotCommand(
    opts,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out, err };
}

test('given a seeded database and --db, plot writes the SVG of the last 6 h and says so in one line', async (t) => {
  const { opts } = seeded(t);
  const options = opts({});
  const { code, out, err } = await run(options);
  assert.equal(code, 0, err.join('\n'));
  // 6 h of readings every 10 s.
  assert.match(
    out[0]!,
    new RegExp(`^wrote ${options.outPath} \\(2160 points, from \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d to .+\\)$`),
  );
  assert.equal(out.length, 1);
  assert.match(err[0]!, /reading the database given by --db.*history from the database/);
  const svg = readFileSync(options.outPath, 'utf8');
  assert.deepEqual(checkXml(svg.trim()).problems, []);
  assert.match(svg, /room \(°C\)/);
  assert.equal(svg.includes('no data'), false);
  assert.equal(/>-100</.test(svg), false, 'heat only: output 0..100 %');
});

test('given a split-range loop in the config, the output axis goes to −100 %', async (t) => {
  const { dir, opts } = seeded(t);
  const outPath = join(dir, 'fermenter.svg');
  const { code } = await run(opts({ loop: 'fermenter', outPath }));
  assert.equal(code, 0);
  assert.match(readFileSync(outPath, 'utf8'), />-100</);
});

test('given --out naming a directory, plot refuses and writes nothing', async (t) => {
  const { dir, opts } = seeded(t);
  const { code, out, err } = await run(opts({ outPath: dir }));
  assert.equal(code, 1);
  assert.deepEqual(out, []);
  assert.match(err.join('\n'), /is a directory/);
});

test('given --out -, the SVG goes to stdout and the summary to stderr', async (t) => {
  const { dir, opts } = seeded(t);
  const { code, out, err } = await run(opts({ outPath: '-' }));
  assert.equal(code, 0);
  assert.equal(out.length, 1);
  assert.ok(out[0]!.startsWith('<svg'));
  assert.match(err.join('\n'), /2160 points/);
  assert.equal(existsSync(join(dir, '-')), false);
});

test('given a loop with no history, the file is written and says "no data"', async (t) => {
  const { opts } = seeded(t);
  const options = opts({ loop: 'greenhouse_humidity' });
  const { code, out } = await run(options);
  assert.equal(code, 0);
  assert.match(out[0]!, /\(0 points/);
  assert.match(readFileSync(options.outPath, 'utf8'), /no data/);
});

test('given no database at --db, plot fails with the reason and writes nothing', async (t) => {
  const { dir, opts } = seeded(t);
  const options = opts({ dbPath: join(dir, 'missing.db') });
  const { code, err } = await run(options);
  assert.equal(code, 1);
  assert.match(err.join('\n'), /no database at/);
  assert.equal(existsSync(options.outPath), false);
});

test('the API’s answers as plot data: times parsed, unit from the loop, split range from its modes', () => {
  const history = {
    loop: 'fermenter',
    from: '2026-11-30T12:00:00.000Z',
    to: '2026-11-30T13:00:00.000Z',
    downsampled: false,
    points: [
      { at: '2026-11-30T12:00:10.000Z', measured: null, setpoint: 18, output: -0.2, action: 'cooling' },
    ],
  };
  const events = [
    {
      at: '2026-11-30T12:30:00.000Z',
      loop: 'fermenter',
      kind: 'setpoint-changed',
      source: 'cli',
      message: '18 → 17',
    },
  ];
  const table: [string[], boolean][] = [
    [['off', 'heat'], false],
    [['off', 'heat', 'cool', 'heat_cool'], true],
    [['off', 'cool'], true],
  ];
  for (const [modes, split] of table) {
    const data = plotDataOfApi(history, events, { unit: '°C', modes } as LoopView);
    assert.equal(data.splitRange, split, modes.join(','));
    assert.equal(data.unit, '°C');
    assert.deepEqual(data.points[0], {
      tMs: Date.parse('2026-11-30T12:00:10Z'),
      measured: null,
      setpoint: 18,
      output: -0.2,
      action: 'cooling',
    });
    assert.deepEqual(data.events, [
      { tMs: Date.parse('2026-11-30T12:30:00Z'), kind: 'setpoint-changed', message: '18 → 17' },
    ]);
    assert.deepEqual([data.fromMs, data.toMs], [Date.parse(history.from), Date.parse(history.to)]);
  }
});
