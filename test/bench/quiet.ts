/**
 * The quiet-sensor figures: `npm run bench:quiet` (node --import tsx
 * test/bench/quiet.ts [--hours N] [--json]).
 *
 * The demo's fermenter read through a Zigbee probe that reports on a 0.5 °C change or every
 * 50 min (test/support/quiet-fermenter.ts, the scenario test/daemon-quiet-sensor.test.ts
 * asserts), run for 24 simulated hours on a manual clock: before, the mqtt sensor as it was
 * (stale after staleAfterS, 180 s by default); after, with its liveness block (Zigbee2MQTT
 * availability, last_seen). A third column has a probe that never reports while the value holds
 * (no hourly report): with liveness it goes safe at maxQuietS each time the plant holds steady
 * for an hour, as it should. Prints the counts side by side. Not a test: always exits 0 unless
 * it crashes.
 */
import { HOUR_MS, type QuietCounts, quietDay } from '../support/quiet-fermenter.js';

function hoursArg(): number {
  const index = process.argv.indexOf('--hours');
  const hours = index < 0 ? 24 : Number(process.argv[index + 1]);
  if (!(hours > 0)) throw new Error('--hours takes a positive number');
  return hours;
}

const ROWS: [label: string, value: (c: QuietCounts) => string][] = [
  ['probe reports', (c) => String(c.reports)],
  ['loop cycles', (c) => String(c.cycles)],
  ['cycles in the safe state', (c) => String(c.safeCycles)],
  ['SensorHealthy True → False', (c) => String(c.healthyFlaps)],
  ['time in the safe state', (c) => `${(c.safeMs / HOUR_MS).toFixed(2)} h`],
];

async function main(): Promise<void> {
  const hours = hoursArg();
  const startedMs = Date.now();
  const before = await quietDay(false, hours);
  const after = await quietDay(true, hours);
  const changeOnly = await quietDay(true, hours, null);
  const tookS = (Date.now() - startedMs) / 1000;
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ hours, before, after, changeOnly, tookS }));
    return;
  }
  console.log(
    `quiet Zigbee probe (a 0.5 °C change or every 50 min) on the demo's fermenter, ${hours} simulated h`,
  );
  const width = Math.max(...ROWS.map(([label]) => label.length));
  const line = (cells: string[]) =>
    console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(width) : cell.padStart(12))).join('  '));
  line(['', 'before', 'liveness', 'change only']);
  for (const [label, value] of ROWS) line([label, value(before), value(after), value(changeOnly)]);
  console.log('before: the mqtt sensor without liveness, staleAfterS default (180 s)');
  console.log('liveness: zigbee2mqtt availability and last_seen, maxQuietS default (5400 s)');
  console.log(`change only: liveness, the probe without its hourly report (${tookS.toFixed(1)} s)`);
}

await main();
