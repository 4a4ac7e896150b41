/**
 * The README's pictures of the dashboard and its figures, made by hand (not a test):
 *
 *   node --import tsx test/http/dashboard-screenshot.ts [--hours 6] [--runs 5] [--url http://127.0.0.1:8734]
 *
 * Starts the demo node in-process (a private Mosquitto when one is installed, so the header
 * shows MQTT connected) on a ManualClock, runs it `--hours` simulated hours with two setpoint
 * changes through the API (marked on the charts), then opens the page in Chromium: writes
 * docs/dashboard.png (1280 px wide) and docs/dashboard-phone.png (390 px), and prints the time
 * to first chart (navigation start → the first uPlot chart drawn, median of `--runs` cold
 * loads) and the page weight (bytes transferred; the static files gzipped). With `--url` it
 * measures a running daemon instead (`homeostat run --config config/demo.yaml --speed 60`) and
 * takes no pictures.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { type Broker, startMosquitto } from '../integration/mosquitto.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { makeTempDir } from '../support/tmp.js';
import { CHROMIUM, CHROMIUM_ARGS, postJson, serving } from './support.js';

const DOCS = path.resolve(import.meta.dirname, '../../docs');
/** 06:00 UTC: after a few hours the chart's axis reads as a morning. */
const START_MS = Date.UTC(2026, 0, 15, 6, 0);
/** Advance in steps: one ManualClock.advance fires at most 10 000 timers. */
const ADVANCE_STEP_MS = 10 * 60_000;

const { values: args } = parseArgs({
  options: {
    hours: { type: 'string', default: '6' },
    runs: { type: 'string', default: '5' },
    url: { type: 'string' },
  },
});

// Code run in the page, as text (DevTools evaluates it, so the page's CSP does not stop it): the
// project's TypeScript has no DOM types, and tsx would wrap named functions in a helper the page
// does not have.
/** A chart uPlot has drawn with measured values in it (the page sets data-measured). */
const DRAWN_CHART = '[data-role="chart"][data-measured]:not([data-measured="0"])';
/** The first-chart mark, when each chart was first drawn, and every request's sizes. */
const READ_TIMINGS = `(() => ({
  firstChartMs: performance.getEntriesByName('homeostat:first-chart')[0]?.startTime ?? Number.NaN,
  drawnAtMs: [...document.querySelectorAll('[data-role="chart"]')].map((c) => Number(c.dataset.drawnAtMs)),
  entries: [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map(
    (e) => ({ url: e.name, transfer: e.transferSize, encoded: e.encodedBodySize, decoded: e.decodedBodySize }),
  ),
}))()`;

interface PageTimings {
  firstChartMs: number;
  drawnAtMs: number[];
  entries: { url: string; transfer: number; encoded: number; decoded: number }[];
}

interface LoadFigures {
  firstChartMs: number;
  allChartsMs: number;
  /** Bytes on the wire (headers included) of the page and its static files. */
  staticTransferBytes: number;
  /** Bodies as sent (gzipped) of the page and its static files. */
  staticEncodedBytes: number;
  /** Bodies before compression. */
  staticDecodedBytes: number;
  /** The API answers the first view needs (node, loops, history, events), on the wire. */
  apiTransferBytes: number;
  requests: number;
}

async function main(): Promise<void> {
  const runs = Number(args.runs);
  let base = args.url;
  let demo: { node: TestNode; release: () => Promise<void> } | undefined;
  if (!base) {
    demo = await startDemo(Number(args.hours));
    base = `http://127.0.0.1:${new URL(await serving(demo.node.node)).port}`;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const figures: LoadFigures[] = [];
    for (let run = 0; run < runs; run++) figures.push(await measureLoad(browser, base));
    report(base, figures);
    if (demo) await takePictures(browser, base);
  } finally {
    await browser.close();
    await demo?.release();
  }
}

/** The demo node after `hours` simulated hours, with a setpoint change on two loops. */
async function startDemo(hours: number): Promise<{ node: TestNode; release: () => Promise<void> }> {
  const { dir, remove } = makeTempDir('homeostat-screenshot-');
  let broker: Broker | undefined;
  try {
    broker = await startMosquitto();
  } catch (error) {
    process.stderr.write(`no private broker (${(error as Error).message}): the page shows MQTT off\n`);
  }
  const clock = new ManualClock(START_MS);
  const node = await startTestNode(demoConfigText(), path.join(dir, 'state.db'), {
    clock,
    http: { port: 0 },
    ...(broker ? { mqtt: { url: broker.url } } : {}),
  });
  const base = `http://127.0.0.1:${new URL(await serving(node.node)).port}`;
  const changes = new Map([
    [Math.round(hours * 0.6 * 6), { loop: 'room', setpoint: 21.5 }],
    [Math.round(hours * 0.45 * 6), { loop: 'fermenter', setpoint: 19 }],
  ]);
  for (let step = 0; step < hours * 6; step++) {
    const change = changes.get(step);
    if (change) await postJson(base, `/api/loops/${change.loop}`, { setpoint: change.setpoint });
    await clock.advance(ADVANCE_STEP_MS);
  }
  return {
    node,
    release: async () => {
      await node.stop();
      await broker?.dispose();
      remove();
    },
  };
}

/** One cold load in a new context (no cache): when the charts were drawn and what came over. */
async function measureLoad(browser: Browser, base: string): Promise<LoadFigures> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await waitForCharts(page);
    const seen = (await page.evaluate(READ_TIMINGS)) as PageTimings;
    const isApi = (e: { url: string }) => new URL(e.url).pathname.startsWith('/api/');
    const statics = seen.entries.filter((e) => !isApi(e));
    const sum = (list: typeof statics, key: 'transfer' | 'encoded' | 'decoded') =>
      list.reduce((total, e) => total + e[key], 0);
    return {
      firstChartMs: seen.firstChartMs,
      allChartsMs: Math.max(...seen.drawnAtMs),
      staticTransferBytes: sum(statics, 'transfer'),
      staticEncodedBytes: sum(statics, 'encoded'),
      staticDecodedBytes: sum(statics, 'decoded'),
      apiTransferBytes: sum(seen.entries.filter(isApi), 'transfer'),
      requests: seen.entries.length,
    };
  } finally {
    await context.close();
  }
}

/** Waits until every card's chart has drawn points with measured values. */
async function waitForCharts(page: Page): Promise<void> {
  await page.locator('[data-loop]').first().waitFor();
  const cards = await page.locator('[data-loop]').count(); // all added at once
  await page
    .locator(DRAWN_CHART)
    .nth(cards - 1)
    .waitFor();
}

function report(base: string, figures: LoadFigures[]): void {
  const median = (key: keyof LoadFigures) => {
    const sorted = figures.map((f) => f[key]).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
  const lines = [
    `dashboard at ${base}, ${figures.length} cold loads (median), Chromium headless, loopback:`,
    `  time to first chart (navigation start → first chart drawn): ${median('firstChartMs').toFixed(0)} ms` +
      ` (each: ${figures.map((f) => f.firstChartMs.toFixed(0)).join(', ')} ms)`,
    `  every chart drawn: ${median('allChartsMs').toFixed(0)} ms`,
    `  page weight, static files (page, scripts, styles, uPlot): ${kB(median('staticTransferBytes'))} transferred` +
      ` (${kB(median('staticEncodedBytes'))} gzipped bodies, ${kB(median('staticDecodedBytes'))} uncompressed)`,
    `  API answers of the first view (node, loops, history, events): ${kB(median('apiTransferBytes'))} transferred`,
    `  requests: ${median('requests')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function takePictures(browser: Browser, base: string): Promise<void> {
  if (!existsSync(DOCS)) mkdirSync(DOCS, { recursive: true });
  const shots = [
    { file: 'dashboard.png', viewport: { width: 1280, height: 900 }, scale: 1, fullPage: true },
    { file: 'dashboard-phone.png', viewport: { width: 390, height: 844 }, scale: 2, fullPage: false },
  ];
  for (const shot of shots) {
    const context = await browser.newContext({
      viewport: shot.viewport,
      deviceScaleFactor: shot.scale,
      locale: 'en-GB', // 24-hour times: shorter axis labels
      timezoneId: 'UTC', // the demo's clock is set in UTC
    });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await waitForCharts(page);
    await page.locator('#live[data-state="ok"]').waitFor();
    await page.screenshot({ path: path.join(DOCS, shot.file), fullPage: shot.fullPage });
    process.stdout.write(`wrote docs/${shot.file}\n`);
    await context.close();
  }
}

await main();
