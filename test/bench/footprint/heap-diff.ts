/**
 * Where the memory per loop goes: compares two V8 heap snapshots (the daemon at 1 and at N
 * loops, from `npm run bench:footprint -- --heap-snapshots DIR`) by node type and name
 * (constructor for objects, function name for closures), and prints the largest growths in
 * bytes, counts and bytes per added loop.
 *
 * node --import tsx test/bench/footprint/heap-diff.ts DIR/loops-1.heapsnapshot DIR/loops-200.heapsnapshot [--top 30]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  strings: string[];
}

type Totals = Map<string, { bytes: number; count: number }>;

/** Self size and count per "type name" (strings and code grouped by type only). */
export function summarize(path: string): Totals {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const totals: Totals = new Map();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt]!]!;
    const name = heap.strings[heap.nodes[i + nameAt]!] ?? '';
    const grouped = ['string', 'concatenated string', 'sliced string', 'number', 'code', 'hidden'].includes(
      type,
    );
    const key = grouped ? `(${type})` : `${type} ${name.slice(0, 60)}`;
    const entry = totals.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += heap.nodes[i + sizeAt]!;
    entry.count++;
    totals.set(key, entry);
  }
  return totals;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, loops: { type: 'string' } },
  });
  const [smallPath, largePath] = positionals;
  if (!smallPath || !largePath) throw new Error('usage: heap-diff.ts SMALL.heapsnapshot LARGE.heapsnapshot');
  const loopsOf = (path: string) => Number(/loops-(\d+)/.exec(path)?.[1] ?? Number.NaN);
  const addedLoops = Number(values.loops ?? loopsOf(largePath) - loopsOf(smallPath));
  const small = summarize(smallPath);
  const large = summarize(largePath);
  const sum = (totals: Totals) => [...totals.values()].reduce((acc, e) => acc + e.bytes, 0);
  const rows = [...large.entries()].map(([key, entry]) => {
    const before = small.get(key) ?? { bytes: 0, count: 0 };
    return { key, bytes: entry.bytes - before.bytes, count: entry.count - before.count };
  });
  rows.sort((a, b) => b.bytes - a.bytes);
  const total = sum(large) - sum(small);
  const write = (line: string) => process.stdout.write(`${line}\n`);
  write(
    `heap ${(sum(small) / 1048576).toFixed(1)} MB → ${(sum(large) / 1048576).toFixed(1)} MB: ` +
      `+${(total / 1024).toFixed(0)} kB, ${(total / addedLoops / 1024).toFixed(1)} kB per added loop (${addedLoops})`,
  );
  write(`${'type name'.padEnd(64)}${'Δ kB'.padStart(9)}${'Δ count'.padStart(9)}${'B/loop'.padStart(9)}`);
  for (const row of rows.slice(0, Number(values.top))) {
    write(
      `${row.key.padEnd(64)}${(row.bytes / 1024).toFixed(1).padStart(9)}${String(row.count).padStart(9)}` +
        `${(row.bytes / addedLoops).toFixed(0).padStart(9)}`,
    );
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) main();
