/**
 * A sensor flapping every 5 s for an hour, with and without alerts: `npm run bench:alerts`
 * (node --import tsx test/bench/alerts-flap.ts [--speed N] [--json]).
 *
 * The node as `homeostat run` builds it (a real SQLite file in a temp dir, the simulated plant)
 * on a clock running `--speed` times real time (default 60: the hour takes a minute), its
 * sensor (read every second) reading NaN for 5 s and well for 5 s, 360 times. Run twice side by side: without
 * alert channels, and with ntfy and a webhook (loopback servers answering as they do), every
 * fault raising an alert at once (faultedForS 0) and the default cap of 10 an hour. Prints the
 * messages each channel took (bounded by the cap), the loop cycles run and the event loop's
 * delay (p50, p99, max): regulation must be the same in both columns. Not a test: exits 0
 * unless it crashes.
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import { ScaledClock } from '../../src/runtime/scaled-clock.js';
import { startFakeService } from '../alerts/fake-services.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode } from '../support/node.js';
import { withTempDir } from '../support/tmp.js';

const HOUR_MS = 3_600_000;
const FLAP_MS = 5_000;

interface RunFigures {
  cycles: number;
  faultedCycles: number;
  phone: number;
  hook: number;
  faults: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  tookS: number;
}

function speedArg(): number {
  const index = process.argv.indexOf('--speed');
  const speed = index < 0 ? 60 : Number(process.argv[index + 1]);
  if (!(speed > 0)) throw new Error('--speed takes a positive number');
  return speed;
}

async function flappingHour(withAlerts: boolean, speed: number): Promise<RunFigures> {
  const phone = await startFakeService('{"id":"x"}');
  const hook = await startFakeService('');
  try {
    const extra = withAlerts
      ? `alerts:\n  channels:\n    phone: { type: ntfy, server: "${phone.url}", topic: t1 }\n    hook: { type: webhook, url: "${hook.url}/a" }\n  rules: { faultedForS: 0 }\n`
      : '';
    return await withTempDir(async (dir) => {
      const clock = new ScaledClock(speed);
      let cycles = 0;
      let faultedCycles = 0;
      let faults = 0;
      let wasFaulted = false;
      // Read every second: a probe read every 10 s would see a 5 s flap always in the same phase.
      const text = minimalSimConfigText({ extra }).replace(
        't: { kind: simulated, plant: p }',
        't: { kind: simulated, plant: p, periodS: 1 }',
      );
      const node = await startTestNode(text, path.join(dir, 'h.db'), {
        clock,
        onStatus: (status) => {
          cycles++;
          const isFaulted = status.conditions.some((c) => c.type === 'Faulted' && c.status === 'True');
          if (isFaulted) faultedCycles++;
          if (isFaulted && !wasFaulted) faults++;
          wasFaulted = isFaulted;
        },
      });
      const sensor = node.node.drivers.sensors.get('t') as unknown as SimSensor;
      const delay = monitorEventLoopDelay({ resolution: 1 });
      const startedMs = performance.now();
      delay.enable();
      await new Promise<void>((resolve) => {
        let flaps = 0;
        const flap = () => {
          flaps++;
          sensor.injectFault(flaps % 2 === 1 ? { kind: 'nan' } : { kind: 'none' });
          if (flaps * FLAP_MS >= HOUR_MS) resolve();
          else clock.setTimer(flap, FLAP_MS);
        };
        clock.setTimer(flap, FLAP_MS);
      });
      delay.disable();
      const tookS = (performance.now() - startedMs) / 1000;
      await node.stop();
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      return {
        cycles,
        faultedCycles,
        phone: phone.requests.length,
        hook: hook.requests.length,
        faults,
        p50Ms: ms(delay.percentile(50)),
        p99Ms: ms(delay.percentile(99)),
        maxMs: ms(delay.max),
        tookS,
      };
    });
  } finally {
    await Promise.all([phone.close(), hook.close()]);
  }
}

const ROWS: [label: string, value: (f: RunFigures) => string][] = [
  ['loop cycles', (f) => String(f.cycles)],
  ['cycles faulted (safe)', (f) => String(f.faultedCycles)],
  ['faults (each would be an alert)', (f) => String(f.faults)],
  ['ntfy messages', (f) => String(f.phone)],
  ['webhook messages', (f) => String(f.hook)],
  ['event-loop delay p50', (f) => `${f.p50Ms} ms`],
  ['event-loop delay p99', (f) => `${f.p99Ms} ms`],
  ['event-loop delay max', (f) => `${f.maxMs} ms`],
  ['real time taken', (f) => `${f.tookS.toFixed(1)} s`],
];

async function main(): Promise<void> {
  const speed = speedArg();
  const without = await flappingHour(false, speed);
  const withAlerts = await flappingHour(true, speed);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ speed, without, withAlerts }));
    return;
  }
  console.log(`a sensor flapping every 5 s (NaN / well) for 1 simulated hour at --speed ${speed}`);
  const width = Math.max(...ROWS.map(([label]) => label.length));
  const line = (cells: string[]) =>
    console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(width) : cell.padStart(14))).join('  '));
  line(['', 'no alerts', 'alerts', 'ratio']);
  for (const [label, value] of ROWS) {
    const a = Number.parseFloat(value(without));
    const b = Number.parseFloat(value(withAlerts));
    line([label, value(without), value(withAlerts), a > 0 ? `${(b / a).toFixed(2)}×` : '–']);
  }
  console.log('alerts: ntfy and a webhook, faultedForS 0, capPerHour 10 (resolutions not counted)');
}

await main();
