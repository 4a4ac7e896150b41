import { appendFileSync } from 'node:fs';
import type { TestContext } from 'node:test';

/**
 * The figures every fault scenario prints (and the summary table at the end of
 * `npm run test:faults` collects). Printed, never asserted as timings: the assertions are the
 * safety outcomes and generous bounds, these are for people (docs/reliability.md).
 */
export interface Figures {
  /** Short scenario name, the first column of the summary table. */
  scenario: string;
  /** From the fault to every affected actuator at its safe state (or the fault being handled), ms. */
  timeToSafeMs?: number | undefined;
  /** Longest event-loop stall of the daemon during the fault, ms. */
  longestStallMs?: number | undefined;
  /** Event-loop delay p99 of the daemon during the fault, ms. */
  p99DelayMs?: number | undefined;
  /** Daemon resident set size before the fault, bytes. */
  rssBeforeBytes?: number | undefined;
  /** Daemon resident set size after the fault (once settled), bytes. */
  rssAfterBytes?: number | undefined;
  /** Rows the daemon wrote to its database during the fault (events, unless `notes` says otherwise). */
  rowsWritten?: number | undefined;
  /** Anything else worth a line: counts, what was used instead of the figure. */
  notes?: string | undefined;
}

/** Where the runner (test/faults/run.ts) collects every scenario's figures, one JSON line each. */
export const FIGURES_FILE_ENV = 'HOMEOSTAT_FAULT_FIGURES';

/**
 * Prints the figures as test diagnostics (the spec reporter shows them under the test) and
 * appends them to the runner's figures file, when there is one.
 */
export function reportFigures(t: TestContext, figures: Figures): void {
  t.diagnostic(`figures: ${formatFigures(figures)}`);
  const file = process.env[FIGURES_FILE_ENV];
  if (file) appendFileSync(file, `${JSON.stringify(figures)}\n`);
}

export function formatFigures(f: Figures): string {
  return [
    `time to safe state ${ms(f.timeToSafeMs)}`,
    `longest stall ${ms(f.longestStallMs)}`,
    `p99 ${ms(f.p99DelayMs)}`,
    `RSS ${mb(f.rssBeforeBytes)} → ${mb(f.rssAfterBytes)}`,
    `rows written ${f.rowsWritten ?? '–'}`,
    ...(f.notes ? [f.notes] : []),
  ].join(', ');
}

export function ms(value: number | undefined): string {
  if (value === undefined) return '–';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

export function mb(bytes: number | undefined): string {
  return bytes === undefined ? '–' : `${Math.round(bytes / 1_048_576)} MB`;
}

/** The summary table (Markdown) of every scenario's figures, in the order they ran. */
export function summaryTable(all: Figures[]): string {
  const rows = all.map((f) =>
    [
      f.scenario,
      ms(f.timeToSafeMs),
      ms(f.longestStallMs),
      ms(f.p99DelayMs),
      `${mb(f.rssBeforeBytes)} → ${mb(f.rssAfterBytes)}`,
      f.rowsWritten === undefined ? '–' : String(f.rowsWritten),
      f.notes ?? '',
    ].join(' | '),
  );
  return [
    '| scenario | time to safe state | longest stall | p99 delay | RSS before → after | rows written | notes |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}
