/**
 * `homeostat history --csv`: the loop's columns, then one column per recorded series
 * (loops.<id>.record), named `<label>_<unit>` as `resolution_s` names its unit.
 *
 * The rows are the union of the loop's sample times and the recorded points' times, oldest first:
 * a recorded sensor is sampled on its own period, so its values rarely fall on a loop sample.
 * A value goes into the row of its own time (a loop sample's row when one is at that time); every
 * other cell is empty: the loop's cells on a row of recorded values only, a series' cell where it
 * has no point, and where its point is a gap (null: no reading, not a number, or stale). Without
 * recorded series the output is the loop's columns alone, as without recording.
 */

/** A history row as printed; `resolutionS` undefined when unknown (the API's points). */
export interface HistoryRow {
  at: string;
  setpoint: number;
  measured?: number | null;
  output: number;
  action: string;
  resolutionS?: number;
}

/** A recorded series as the CSV needs it (the API's RecordedSeries fits). */
export interface CsvRecordedSeries {
  label: string;
  unit: string;
  points: readonly { at: string; value: number | null }[];
}

export const LOOP_CSV_HEADER = 'time,setpoint,measured,output,action,resolution_s';

/** One line of the CSV: a loop sample, recorded values at its time, or both. */
interface CsvLine {
  at: string;
  row?: HistoryRow;
  values: (number | null | undefined)[];
}

/** The header and the rows of `history --csv`. */
export function historyCsvLines(
  rows: readonly HistoryRow[],
  recorded: readonly CsvRecordedSeries[] = [],
): string[] {
  const header = [LOOP_CSV_HEADER, ...recorded.map((s) => csvField(recordedColumnName(s)))].join(',');
  return [header, ...mergeByTime(rows, recorded).map(formatLine)];
}

/** A recorded series' column: its label, `_`, its unit (the label alone without a unit). */
export function recordedColumnName(series: { label: string; unit: string }): string {
  return series.unit === '' ? series.label : `${series.label}_${series.unit}`;
}

/** A field quoted as RFC 4180 says when it holds a comma, a quote or a line break. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The loop's output as printed: three decimals at most. */
export function formatOutput(output: number): string {
  return String(Math.round(output * 1000) / 1000);
}

function formatLine({ at, row, values }: CsvLine): string {
  const cells = values.map((value) => (value === undefined || value === null ? '' : String(value)));
  const loop = row
    ? [
        row.setpoint,
        row.measured === undefined || row.measured === null ? '' : String(row.measured),
        formatOutput(row.output),
        row.action,
        row.resolutionS ?? '',
      ]
    : ['', '', '', '', ''];
  return [at, ...loop, ...cells].join(',');
}

/** Loop rows and recorded points on one timeline: one line per time, loop rows kept in order. */
function mergeByTime(rows: readonly HistoryRow[], recorded: readonly CsvRecordedSeries[]): CsvLine[] {
  const lines: { atMs: number; line: CsvLine }[] = [];
  const byTime = new Map<number, CsvLine>();
  const empty = (): (number | null | undefined)[] => recorded.map(() => undefined);
  for (const row of rows) {
    const atMs = Date.parse(row.at);
    const line = { at: row.at, row, values: empty() };
    lines.push({ atMs, line });
    if (!byTime.has(atMs)) byTime.set(atMs, line);
  }
  recorded.forEach((series, column) => {
    for (const point of series.points) {
      const atMs = Date.parse(point.at);
      let line = byTime.get(atMs);
      if (!line) {
        line = { at: point.at, values: empty() };
        byTime.set(atMs, line);
        lines.push({ atMs, line });
      }
      line.values[column] = point.value;
    }
  });
  // Stable: loop rows at equal times (a clock set back) keep their order.
  return lines.sort((a, b) => a.atMs - b.atMs).map(({ line }) => line);
}
