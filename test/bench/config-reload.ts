/**
 * Config reload stall benchmark (`node --import tsx test/bench/config-reload.ts`). A reload
 * reads, parses and validates the config on the daemon's event loop, so its duration is how
 * long every loop, timer and MQTT message waits. This measures it for files at the size cap
 * (MAX_CONFIG_BYTES, 128 KiB) and for a typical config, and for a 58 MB file (refused unread):
 * - `stall`: the longest event-loop delay seen by perf_hooks' monitorEventLoopDelay while a
 *   timer ticks every 10 ms and the load runs (what the loops would feel);
 * - `load`: wall time of the load itself (on a worker it includes starting the worker).
 * A baseline row (nothing loaded) shows the machine's own noise: compare stalls against it.
 * Shapes at the cap: all comments (cheap), one long string value, and ~350 loops with their
 * plants, sensors and actuators (the worst: every node validated). Prints figures; exits 0.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import {
  type ConfigResult,
  loadConfigFile,
  loadConfigFileOffThread,
  MAX_CONFIG_BYTES,
} from '../../src/config/load.js';
import { makeTempDir } from '../support/tmp.js';

const HEADER = 'version: 1\nnode: { id: bench }\n';

function loopsConfig(maxBytes: number): string {
  const parts = {
    plants: [] as string[],
    sensors: [] as string[],
    actuators: [] as string[],
    loops: [] as string[],
  };
  let size = HEADER.length + 80;
  for (let i = 0; ; i++) {
    const plant = `    p${i}: { kind: thermal, ambient: 10, timeConstantS: 3600 }\n`;
    const sensor = `  t${i}: { kind: simulated, plant: p${i}, periodS: 10 }\n`;
    const actuator = `  h${i}: { kind: simulated_relay, plant: p${i}, gain: 20, windowS: 300, minOnS: 60, minOffS: 60 }\n`;
    const loop = `  l${i}:\n    sensor: t${i}\n    raise: h${i}\n    mode: heat\n    setpoint: 20\n    limits: { min: 5, max: 30 }\n    controller: { type: pid, kp: 0.8, tiS: 1800 }\n`;
    const add = plant.length + sensor.length + actuator.length + loop.length;
    if (size + add > maxBytes) break;
    size += add;
    parts.plants.push(plant);
    parts.sensors.push(sensor);
    parts.actuators.push(actuator);
    parts.loops.push(loop);
  }
  return `${HEADER}simulation:\n  plants:\n${parts.plants.join('')}sensors:\n${parts.sensors.join('')}actuators:\n${parts.actuators.join('')}loops:\n${parts.loops.join('')}`;
}

function typical(): string {
  return loopsConfig(4_000);
}

function commentsAtCap(maxBytes: number): string {
  const base = typical();
  const line = `# ${'x'.repeat(76)}\n`;
  return base + line.repeat(Math.floor((maxBytes - base.length) / line.length));
}

function stringAtCap(maxBytes: number): string {
  const base = typical();
  return `${base}x_note: "${'y'.repeat(maxBytes - base.length - 20)}"\n`;
}

async function measure(
  path: string,
  load: (path: string) => ConfigResult | Promise<ConfigResult>,
): Promise<{ stallMs: number; loadMs: number; result: string }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const ticker = setInterval(() => {}, 10);
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  const loaded = await load(path);
  const loadMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 50));
  histogram.disable();
  clearInterval(ticker);
  const result = loaded.ok
    ? `ok, ${Object.keys(loaded.config.loops).length} loop(s)`
    : `refused: ${loaded.errors[0]?.slice(-90)}${loaded.errors.length > 1 ? ` (+${loaded.errors.length - 1})` : ''}`;
  return { stallMs: histogram.max / 1e6, loadMs, result };
}

const RUNS = 5;

function median(values: number[]): number {
  const sorted = values.toSorted((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const { dir, remove } = makeTempDir('homeostat-bench-config-');
try {
  const cases: Array<[name: string, text: string | undefined]> = [
    ['baseline (nothing loaded)', undefined],
    ['typical (11 loops, 4 KB)', typical()],
    ['comments, at the cap', commentsAtCap(MAX_CONFIG_BYTES)],
    ['one long string, at the cap', stringAtCap(MAX_CONFIG_BYTES)],
    ['many loops, at the cap', loopsConfig(MAX_CONFIG_BYTES)],
    ['58 MB (over the cap)', `${typical()}# ${'x'.repeat(58_000_000)}\n`],
  ];
  const modes = [
    ['on the event loop (loadConfigFile)', loadConfigFile],
    ['on a worker thread (loadConfigFileOffThread)', loadConfigFileOffThread],
  ] as const;
  for (const [how, load] of modes) {
    console.log(
      `\nconfig load ${how}; cap ${MAX_CONFIG_BYTES} bytes; ${RUNS} runs after a warm-up, median / max`,
    );
    console.log('case                              bytes     load ms (med/max)   stall ms (med/max)  result');
    await measure(join(process.cwd(), 'config/demo.yaml'), load);
    for (const [name, text] of cases) {
      const path = join(dir, 'config.yaml');
      if (text !== undefined) writeFileSync(path, text);
      const runs = [];
      for (let run = 0; run < RUNS; run++) {
        runs.push(await measure(path, text === undefined ? () => ({ ok: false, errors: ['-'] }) : load));
      }
      const loads = runs.map((r) => r.loadMs);
      const stalls = runs.map((r) => r.stallMs);
      const cell = (v: number[]) => `${median(v).toFixed(1)} / ${Math.max(...v).toFixed(1)}`.padStart(18);
      console.log(
        `${name.padEnd(30)} ${String(text === undefined ? 0 : Buffer.byteLength(text)).padStart(9)} ${cell(loads)} ${cell(stalls)}  ${text === undefined ? '' : runs[0]!.result}`,
      );
    }
  }
} finally {
  remove();
}
