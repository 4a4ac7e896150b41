import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gapsBefore, minMaxPerBucket, splitRuns } from '../../src/plot/downsample.js';
import { type PlotEvent, type PlotInput, type PlotPoint, renderPlot } from '../../src/plot/render.js';
import { formatTick, timeTicks, valueTicks } from '../../src/plot/ticks.js';
import { escapeXml } from '../../src/plot/xml.js';
import { checkXml } from './xml-check.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const UTC = () => 0;

/** Readings every 10 s for `hours`, around 20 °C. */
function points(hours: number, at: (i: number) => Partial<PlotPoint> = () => ({})): PlotPoint[] {
  const out: PlotPoint[] = [];
  for (let i = 0; i < (hours * HOUR_MS) / 10_000; i++) {
    out.push({
      tMs: T0 + i * 10_000,
      measured: 20 + Math.sin(i / 50),
      setpoint: 20,
      output: 0.5,
      action: 'heating',
      ...at(i),
    });
  }
  return out;
}

function plot(over: Partial<PlotInput> = {}): string {
  const pts = over.points ?? points(2);
  return renderPlot({
    loop: 'room',
    unit: '°C',
    fromMs: T0,
    toMs: T0 + 2 * HOUR_MS,
    points: pts,
    events: [],
    offsetMs: UTC,
    ...over,
  });
}

/** The `d` of every path, in order: measured, setpoint, output. */
function paths(svg: string): string[] {
  return [...svg.matchAll(/<path d="([^"]*)"/g)].map((m) => m[1]!);
}

test('given any input, the SVG is well formed XML with one <svg> root', () => {
  const cases: [string, Partial<PlotInput>][] = [
    ['two hours of readings', {}],
    ['no readings', { points: [] }],
    [
      'events and split range',
      { splitRange: true, events: [{ tMs: T0 + HOUR_MS, kind: 'setpoint-changed', message: 'a' }] },
    ],
  ];
  for (const [name, input] of cases) {
    assert.deepEqual(checkXml(plot(input)).problems, [], name);
  }
});

test('given markup in the loop name and an event, it is escaped: no element but the plot’s own', () => {
  const events: PlotEvent[] = [
    { tMs: T0 + HOUR_MS, kind: 'fault-raised', message: '<script>alert(1)</script> & "quotes"' },
    { tMs: T0 + HOUR_MS / 2, kind: '<b>kind', message: "it's" },
  ];
  const svg = plot({ loop: '<script>alert("x")</script>', unit: '<u>', events });
  assert.deepEqual(checkXml(svg).problems, []);
  assert.equal(svg.includes('<script'), false);
  assert.ok(svg.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  assert.ok(svg.includes('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;'));
  const elements = new Set(checkXml(svg).elements);
  assert.deepEqual(
    [...elements].filter(
      (e) => !['svg', 'title', 'rect', 'text', 'g', 'line', 'path', 'clipPath'].includes(e),
    ),
    [],
  );
});

test('escapeXml: the five XML characters and control characters', () => {
  const table: [string, string][] = [
    ['a<b>c', 'a&lt;b&gt;c'],
    ['x & y', 'x &amp; y'],
    [`"it's"`, '&quot;it&apos;s&quot;'],
    ['bell\u0007', 'bell'],
    ['tab\tok', 'tab\tok'],
  ];
  for (const [text, expected] of table) assert.equal(escapeXml(text), expected, text);
});

test('given no readings in the range, the picture says "no data" and draws no line', () => {
  const svg = plot({ points: [] });
  assert.match(svg, /no data/);
  assert.equal(paths(svg).length, 0);
});

test('given a 20-min gap in the readings, the measured line breaks there; a missing reading breaks it too', () => {
  const gap = points(2).filter((p) => p.tMs < T0 + HOUR_MS || p.tMs >= T0 + HOUR_MS + 20 * 60_000);
  const [measured] = paths(plot({ points: gap }));
  assert.equal(measured!.split('M').length - 1, 2, 'two runs: before and after the gap');

  const missing = points(2, (i) => (i === 300 ? { measured: null } : {}));
  const [measuredMissing] = paths(plot({ points: missing }));
  assert.equal(measuredMissing!.split('M').length - 1, 2);

  const [unbroken] = paths(plot());
  assert.equal(unbroken!.split('M').length - 1, 1, 'without gap: one line');
});

test('given heating only, the output axis is 0..100 %; split range (configured or negative output) −100..100 %', () => {
  const table: [string, Partial<PlotInput>, boolean][] = [
    ['heat only', {}, false],
    ['configured split range', { splitRange: true }, true],
    ['cooling output seen', { points: points(2, (i) => ({ output: i % 2 === 0 ? -0.4 : 0.2 })) }, true],
  ];
  for (const [name, input, negative] of table) {
    const svg = plot(input);
    assert.equal(/>-100</.test(svg), negative, name);
    assert.match(svg, />100</, name);
    assert.match(svg, /output %/, name);
  }
});

test('given a week of 10-s readings, each series is at most ~2000 points and a one-sample spike survives', () => {
  const week = points(24 * 7, (i) => (i === 30_000 ? { measured: 35 } : {}));
  const svg = plot({ points: week, toMs: T0 + 7 * DAY_MS });
  for (const d of paths(svg)) assert.ok(d.split('L').length <= 2_100, `${d.split('L').length} points`);
  // The spike sets the top of the value axis: 35 °C is on it.
  assert.match(svg, />35(\.0)?</);
});

test('minMaxPerBucket keeps the lowest and highest of each bucket in time order', () => {
  const run = [3, 1, 4, 1, 5, 9, 2, 6].map((value, i) => ({ tMs: i, value }));
  assert.deepEqual(
    minMaxPerBucket([run], 0, 4).map((r) => r.map((p) => p.value)),
    [[1, 4, 9, 2]],
  );
  assert.deepEqual(
    splitRuns(
      [
        { tMs: 0, value: 1 },
        { tMs: 10, value: null },
        { tMs: 20, value: 2 },
        { tMs: 100, value: 3 },
      ],
      [false, false, false, true],
    ),
    [[{ tMs: 0, value: 1 }], [{ tMs: 20, value: 2 }], [{ tMs: 100, value: 3 }]],
  );
});

test('gapsBefore: a gap is three typical periods, the period following a change of resolution', () => {
  const table: [string, number[], number[]][] = [
    ['regular', [0, 10, 20, 30, 40], []],
    ['one missed reading is no gap', [0, 10, 20, 40, 50], []],
    ['a long pause is', [0, 10, 20, 30, 100, 110], [4]],
    ['300-s averages, then 10-s readings', [0, 300, 600, 900, 1200, 1210, 1220, 1230, 1240, 1250, 1260], []],
    ['one reading between two gaps', [0, 10, 20, 30, 40, 200, 400, 410], [5, 6]],
  ];
  for (const [name, times, expected] of table) {
    const breaks = gapsBefore(times);
    assert.deepEqual(
      breaks.flatMap((b, i) => (b ? [i] : [])),
      expected,
      name,
    );
  }
});

test('time ticks: HH:MM within a day, dates over several days, on round local times', () => {
  const table: [string, number, number, (t: number) => number, string[]][] = [
    [
      '2 h, UTC',
      T0,
      T0 + 2 * HOUR_MS,
      UTC,
      ['12:00', '12:15', '12:30', '12:45', '13:00', '13:15', '13:30', '13:45', '14:00'],
    ],
    [
      '2 h, UTC+1',
      T0 + 5 * 60_000,
      T0 + 2 * HOUR_MS,
      () => HOUR_MS,
      ['13:15', '13:30', '13:45', '14:00', '14:15', '14:30', '14:45', '15:00'],
    ],
    ['a week', T0, T0 + 7 * DAY_MS, UTC, ['1 Dec', '2 Dec', '3 Dec', '4 Dec', '5 Dec', '6 Dec', '7 Dec']],
    [
      'two days',
      T0,
      T0 + 2 * DAY_MS,
      UTC,
      ['12:00', '18:00', '1 Dec', '06:00', '12:00', '18:00', '2 Dec', '06:00', '12:00'],
    ],
  ];
  for (const [name, from, to, offset, labels] of table) {
    assert.deepEqual(
      timeTicks(from, to, offset).map((t) => t.label),
      labels,
      name,
    );
  }
});

test('value ticks are round and labelled with the decimals their step needs', () => {
  const table: [number, number, string[]][] = [
    [9.5, 20.5, ['10.0', '12.5', '15.0', '17.5', '20.0']],
    [17.8, 19.2, ['18.0', '18.5', '19.0']],
    [0, 100, ['0', '20', '40', '60', '80', '100']],
  ];
  for (const [low, high, expected] of table) {
    const ticks = valueTicks(low, high, 5);
    assert.deepEqual(
      ticks.map((t) => formatTick(t, ticks)),
      expected,
      `${low}..${high}`,
    );
  }
});
