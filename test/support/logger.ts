/**
 * Loggers for tests: one that records every line for assertions, one that says nothing.
 * Both are real pino loggers, so the code under test logs exactly as in production.
 */
import { pino } from 'pino';

/** pino's numeric levels, for filtering records (`records.filter((r) => r.level === LogLevel.warn)`). */
export const LogLevel = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** One log line, parsed. `err` is pino's serialised error when one was logged. */
export interface LogRecord {
  level: number;
  msg: string;
  err?: { message?: string; type?: string; stack?: string } | string;
  [field: string]: unknown;
}

export interface RecordingLogger {
  logger: pino.Logger;
  /** Every record so far, parsed, in order. */
  records: LogRecord[];
  /** The same array as `records`: the name several older tests use. */
  lines: LogRecord[];
  /** Every line so far exactly as written (for "never logged this secret" assertions). */
  text(): string;
  /** The records at exactly `level` (a number of {@link LogLevel}). */
  atLevel(level: number): LogRecord[];
  /** The messages of the records at `level` or above (all by default). */
  messages(minLevel?: number): string[];
}

/**
 * A pino logger that keeps what it writes. `level` is the least severe level kept (default
 * `trace`: everything); `warn` keeps only warnings and worse (to count them).
 */
export function recordingLogger(opts: { level?: pino.LevelWithSilent } = {}): RecordingLogger {
  const written: string[] = [];
  const records: LogRecord[] = [];
  const logger = pino(
    { level: opts.level ?? 'trace' },
    {
      write: (line: string) => {
        written.push(line);
        records.push(JSON.parse(line) as LogRecord);
      },
    },
  );
  return {
    logger,
    records,
    lines: records,
    text: () => written.join(''),
    atLevel: (level) => records.filter((record) => record.level === level),
    messages: (minLevel = 0) =>
      records.filter((record) => record.level >= minLevel).map((record) => record.msg),
  };
}

/** A logger that discards everything (level `silent`). One shared instance: it has no state. */
export const silentLogger: pino.Logger = pino({ level: 'silent' });
