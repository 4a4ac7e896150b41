import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';

export type LogFormat = 'json' | 'pretty' | 'journal';

/** A file's identity, as fstat gives it (numbers or bigints). */
export interface FileIdentity {
  dev: number | bigint;
  ino: number | bigint;
}

/** Where lines go: pino's SonicBoom destination, or a recorder in tests. */
export interface TextSink {
  write(text: string): unknown;
}

/**
 * pino-pretty and its dependencies (~30 modules: colorette, dateformat, fast-copy, pump,
 * split2…) are loaded only for the pretty format: a daemon under systemd logs to the journal
 * and should not carry them (npm run bench:footprint). Required synchronously, as createLogger is.
 */
const requirePretty = (): ((options: PrettyOptions) => PrettyStream) =>
  createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;

/**
 * The root logger (the only one; components get children). Journal lines (`<4>loop: message`)
 * when stdout is systemd's journal stream, readable lines on a terminal, JSON lines otherwise
 * (log shippers) or on request. Writes synchronously so the last lines before an exit are
 * never lost.
 */
export function createLogger(options: { format?: LogFormat | undefined; level?: string } = {}): Logger {
  const format =
    options.format ??
    autoLogFormat(
      process.env.JOURNAL_STREAM,
      process.env.JOURNAL_STREAM ? stdoutIdentity() : undefined,
      process.stdout.isTTY === true,
    );
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  if (format === 'pretty') {
    const pretty = requirePretty();
    return pino(
      { level },
      pretty({
        colorize: process.stdout.isTTY,
        translateTime: 'SYS:HH:MM:ss',
        // One line per event: the message already says what the fields say, and an error's
        // message and causes end the line (as in the journal), so hiding the object hides no cause.
        ignore: 'pid,hostname',
        hideObject: true,
        messageFormat: (record) => readableMessage(record),
        sync: true,
      }),
    );
  }
  const stdout = pino.destination({ sync: true });
  return pino({ level }, format === 'journal' ? journalStream(stdout) : stdout);
}

/** The format when none was asked for: the journal's, a terminal's, or JSON. */
export function autoLogFormat(
  journalStreamVar: string | undefined,
  stdout: FileIdentity | undefined,
  isTTY: boolean,
): LogFormat {
  if (isJournalStream(journalStreamVar, stdout)) return 'journal';
  return isTTY ? 'pretty' : 'json';
}

/**
 * systemd sets JOURNAL_STREAM="<dev>:<ino>" of the stream it connected to the journal
 * (systemd.exec(5)). A child whose stdout was redirected elsewhere (`homeostat run > file`
 * from a unit's shell) inherits the variable, so it only counts when stdout is that stream.
 */
export function isJournalStream(
  journalStreamVar: string | undefined,
  stdout: FileIdentity | undefined,
): boolean {
  const match = /^(\d+):(\d+)$/.exec(journalStreamVar ?? '');
  if (!match || !stdout) return false;
  const [, dev, ino] = match;
  // BigInt: inode numbers can exceed 2^53.
  return BigInt(dev ?? -1) === BigInt(stdout.dev) && BigInt(ino ?? -1) === BigInt(stdout.ino);
}

function stdoutIdentity(): FileIdentity | undefined {
  try {
    return fstatSync(1, { bigint: true });
  } catch {
    return undefined; // stdout closed: not the journal
  }
}

/** sd-daemon(3) priority for a pino level: fatal 2 (crit), error 3, warn 4, info 6, debug/trace 7. */
export function journalPriority(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/**
 * What a person reads of one pino record, in every text format: `loop: message: error: cause…`.
 * pino's err serializer (pino-std-serializers 7) has already appended the messages of the
 * error's `cause` chain to err.message ("start failed: open db: EACCES"); an AggregateError
 * (a connection refused on every address) gets its errors' messages here.
 */
export function readableMessage(record: Record<string, unknown>): string {
  const msg = typeof record.msg === 'string' ? record.msg : '';
  const loop = typeof record.loop === 'string' ? `${record.loop}: ` : '';
  return loop + joinMessages(msg, errorPieces(record.err));
}

/**
 * One pino record as one journal line: `<N>loop: message: error: cause…`. No timestamp (the
 * journal stamps lines) and no other fields, as the pretty format.
 */
export function journalLine(record: Record<string, unknown>): string {
  const level = typeof record.level === 'number' ? record.level : 30;
  // journald splits on newlines: a multi-line message would become entries at priority info.
  return `<${journalPriority(level)}>${readableMessage(record).replace(/\s*[\r\n]+\s*/g, ' ')}\n`;
}

/**
 * `message: error: cause…`, saying each part once: logger.error(err) makes msg err's own
 * message, and a message often quotes its error already ("database … failed (ENOENT: …)").
 */
function joinMessages(msg: string, pieces: readonly string[]): string {
  let text = msg;
  for (const piece of pieces) {
    if (piece === '' || text.includes(piece)) continue;
    text = text === '' ? piece : `${text}: ${piece}`;
  }
  return text;
}

/**
 * The error and each of its causes, as separate parts (so a part the message already says can
 * be left out): read off the stack's first line and its `caused by:` lines, when those make up
 * err.message exactly as pino joined them; else the whole error text as one part.
 */
function errorPieces(err: unknown): string[] {
  const whole = errorText(err);
  if (!err || typeof err !== 'object') return [whole];
  const { message, stack, aggregateErrors } = err as Record<string, unknown>;
  if (typeof message !== 'string' || typeof stack !== 'string' || Array.isArray(aggregateErrors)) {
    return [whole];
  }
  const pieces = stack
    .split('\n')
    .filter((line, i) => i === 0 || line.startsWith('caused by: '))
    .map((line) => line.replace(/^caused by: /, '').replace(/^[\w$]*(?: \[[A-Z0-9_]+\])?: /, ''));
  return pieces.join(': ') === message ? pieces : [whole];
}

/**
 * An error as text: its message (with the causes pino appended), else its code or type (Node's
 * AggregateError for a refused connection has an empty message), then the messages of an
 * AggregateError's errors.
 */
function errorText(err: unknown): string {
  if (typeof err === 'string') return err;
  if (!err || typeof err !== 'object') return '';
  const { message, code, type, aggregateErrors } = err as Record<string, unknown>;
  const own = [message, code, type].find((text) => typeof text === 'string' && text !== '') as
    | string
    | undefined;
  const inner = Array.isArray(aggregateErrors)
    ? [...new Set(aggregateErrors.map(errorText).filter((text) => text !== '' && text !== own))]
    : [];
  if (inner.length === 0) return own ?? '';
  return own ? `${own}: ${inner.join('; ')}` : inner.join('; ');
}

/** A pino destination writing journal lines to `out` (each pino line is one JSON record). */
export function journalStream(out: TextSink): { write(line: string): void } {
  return {
    write(line: string) {
      let text: string;
      try {
        text = journalLine(JSON.parse(line) as Record<string, unknown>);
      } catch {
        text = `<6>${line}`; // never lose a line to formatting
      }
      out.write(text);
    },
  };
}
