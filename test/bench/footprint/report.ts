import type { RunResult } from './measure.js';

const pad = (value: unknown, width: number) => String(value ?? '—').padStart(width);

/** One line per run, with RSS and heap as ratios of the bare node baseline. */
export function printTable(
  results: RunResult[],
  how: { runner: string; speed: number; durationS: number },
): void {
  const bare = results.find((r) => r.loops === undefined);
  const write = (line: string) => process.stdout.write(`${line}\n`);
  write(
    `homeostat footprint — ${how.runner === 'dist' ? 'node dist/cli.js (compiled)' : 'node --import tsx src/cli.ts'}, ` +
      `${how.durationS} s window per run, speed ×${how.speed} unless "real time"; node ${process.version}, ${process.arch}`,
  );
  write(
    `${'run'.padEnd(24)}${pad('start s', 8)}${pad('RSS MB', 8)}${pad('peak', 7)}${pad('×bare', 7)}${pad('heap MB', 8)}${pad('of', 6)}` +
      `${pad('CPU s/sim h', 12)}${pad('p99 ms', 8)}${pad('max ms', 8)}${pad('gap s', 7)}${pad('late', 11)}`,
  );
  for (const r of results) {
    const ratio = bare ? (r.rssMb / bare.rssMb).toFixed(2) : undefined;
    const late = r.gaps === undefined ? undefined : `${r.lateGaps}/${r.gaps}`;
    write(
      `${r.label.padEnd(24)}${pad(r.startS?.toFixed(1), 8)}${pad(r.rssMb, 8)}${pad(r.rssPeakMb, 7)}${pad(ratio, 7)}` +
        `${pad(r.heapUsedMb, 8)}${pad(r.heapTotalMb, 6)}${pad(r.cpuPerSimHourS, 12)}${pad(r.delayP99Ms, 8)}${pad(r.delayMaxMs, 8)}` +
        `${pad(r.maxGapS?.toFixed(1), 7)}${pad(late, 11)}`,
    );
  }
}

/** The targets, each with its figure and PASS/FAIL (or "not measured"). */
export function targetLines(results: RunResult[], sensor: { periodS: number; slackS: number }): string[] {
  const bare = results.find((r) => r.loops === undefined);
  const find = (loops: number, opts: { mqtt?: boolean; realTime?: boolean } = {}) =>
    results.find(
      (r) =>
        r.loops === loops && r.mqtt === (opts.mqtt ?? false) && (r.speed === 1) === (opts.realTime ?? false),
    );
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  const lines: string[] = ['', 'targets:'];
  const three = find(3, { mqtt: true }) ?? find(3);
  if (three && bare) {
    const ratio = three.rssMb / bare.rssMb;
    lines.push(`  ${verdict(ratio <= 1.5)} ${three.label}: RSS ${ratio.toFixed(2)}× bare node (≤ 1.5×)`);
  }
  const fifty = find(50);
  if (fifty) lines.push(`  ${verdict(fifty.rssMb <= 80)} 50 loops: RSS ${fifty.rssMb} MB (≤ 80 MB)`);
  const sped = results.filter((r) => r.loops !== undefined && !r.mqtt && r.speed !== 1);
  if (sped.length >= 2) {
    const first = sped[0]!;
    const last = sped[sped.length - 1]!;
    const perLoop = (key: 'rssMb' | 'heapUsedMb') =>
      ((last[key] - first[key]) * 1024) / (last.loops! - first.loops!);
    lines.push(
      `  ${verdict(perLoop('rssMb') <= 100)} cost per added loop (${first.loops}→${last.loops}): RSS ${perLoop('rssMb').toFixed(0)} kB, heap ${perLoop('heapUsedMb').toFixed(0)} kB (≤ 100 kB)`,
    );
  }
  const mqtt = results.filter((r) => r.mqtt);
  if (mqtt.length >= 2) {
    const a = mqtt[mqtt.length - 2]!;
    const b = mqtt[mqtt.length - 1]!;
    const perLoop = ((b.rssMb - a.rssMb) * 1024) / (b.loops! - a.loops!);
    lines.push(`  info  with MQTT, ${a.loops}→${b.loops} loops: RSS ${perLoop.toFixed(0)} kB per added loop`);
  }
  for (const r of results.filter((x) => x.loops === 200)) {
    lines.push(
      `  ${verdict(r.delayP99Ms <= 20)} ${r.label}: event-loop delay p99 ${r.delayP99Ms} ms (≤ 20 ms), max ${r.delayMaxMs} ms`,
    );
    const limitS = sensor.periodS + sensor.slackS;
    lines.push(
      `  ${verdict((r.maxGapS ?? Infinity) <= limitS)} ${r.label}: largest reading gap ${r.maxGapS?.toFixed(1)} s (≤ ${limitS} s), ${r.lateGaps} of ${r.gaps} late`,
    );
  }
  return lines;
}
