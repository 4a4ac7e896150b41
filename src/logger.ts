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
        // One line per event: the message already says what the fields say.
        ignore: 'pid,hostname',
        hideObject: true,
        messageFormat: '{if loop}{loop}: {end}{msg}',
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
 * One pino record as one journal line: `<N>loop: message: error: cause…`. No timestamp (the
 * journal stamps lines) and no other fields, as the pretty format. pino's err serializer has
 * already appended the cause chain to err.message.
 */
export function journalLine(record: Record<string, unknown>): string {
  const level = typeof record.level === 'number' ? record.level : 30;
  const msg = typeof record.msg === 'string' ? record.msg : '';
  const error = errorText(record.err);
  const text = joinMessages(msg, error);
  const loop = typeof record.loop === 'string' ? `${record.loop}: ` : '';
  // journald splits on newlines: a multi-line message would become entries at priority info.
  return `<${journalPriority(level)}>${(loop + text).replace(/\s*[\r\n]+\s*/g, ' ')}\n`;
}

/** `message: error`, saying the error once: logger.error(err) makes msg err's own message. */
function joinMessages(msg: string, error: string): string {
  if (!error || msg.includes(error)) return msg;
  if (!msg || error.startsWith(msg)) return error; // the serialized message has the causes
  return `${msg}: ${error}`;
}

function errorText(err: unknown): string {
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  return '';
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
