import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

/**
 * pino-pretty and its dependencies (~30 modules: colorette, dateformat, fast-copy, pump,
 * split2…) are loaded only for the pretty format: a daemon under systemd logs JSON and should
 * not carry them (npm run bench:footprint). Required synchronously, as createLogger is.
 */
const requirePretty = (): ((options: PrettyOptions) => PrettyStream) =>
  createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;

/**
 * The root logger (the only one; components get children). JSON lines by default, as
 * journald and log shippers want; readable lines when stdout is a terminal or on request.
 * Writes synchronously so the last lines before an exit are never lost.
 */
export function createLogger(options: { format?: LogFormat; level?: string } = {}): Logger {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
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
  return pino({ level }, pino.destination({ sync: true }));
}
