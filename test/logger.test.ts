import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import {
  autoLogFormat,
  type FileIdentity,
  isJournalStream,
  journalPriority,
  journalStream,
  readableMessage,
} from '../src/logger.js';

/** A pino logger writing journal lines, as createLogger does for the journal format. */
function journalLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, journalStream({ write: (text: string) => lines.push(text) }));
  return { logger, lines };
}

const stdout: FileIdentity = { dev: 25n, ino: 3_456_789n };

describe('journal stream detection (systemd.exec(5) JOURNAL_STREAM)', () => {
  const cases: [string, string | undefined, FileIdentity | undefined, boolean][] = [
    ['dev:ino of stdout', '25:3456789', stdout, true],
    ['the same identity as numbers', '25:3456789', { dev: 25, ino: 3_456_789 }, true],
    ['an inode beyond 2^53', '25:18446744073709551000', { dev: 25n, ino: 18446744073709551000n }, true],
    ['stdout redirected elsewhere (other inode)', '25:3456789', { dev: 25n, ino: 42n }, false],
    ['other device, same inode', '26:3456789', stdout, false],
    ['no JOURNAL_STREAM', undefined, stdout, false],
    ['an empty JOURNAL_STREAM', '', stdout, false],
    ['a malformed JOURNAL_STREAM', '25-3456789', stdout, false],
    ['trailing garbage', '25:3456789x', stdout, false],
    ['stdout cannot be stat-ed (closed)', '25:3456789', undefined, false],
  ];
  for (const [name, variable, identity, expected] of cases) {
    test(`given ${name}, then journal is ${expected}`, () => {
      assert.equal(isJournalStream(variable, identity), expected);
    });
  }
});

describe('automatic log format', () => {
  const cases: [string, string | undefined, boolean, string][] = [
    ['stdout is the journal stream', '25:3456789', false, 'journal'],
    ['a terminal', undefined, true, 'pretty'],
    ['a terminal inheriting a stale JOURNAL_STREAM', '1:2', true, 'pretty'],
    ['a pipe or file', undefined, false, 'json'],
    ['a pipe inheriting a stale JOURNAL_STREAM', '1:2', false, 'json'],
  ];
  for (const [name, variable, isTTY, expected] of cases) {
    test(`given ${name}, when no --log-format, then ${expected}`, () => {
      assert.equal(autoLogFormat(variable, stdout, isTTY), expected);
    });
  }
});

describe('journal lines', () => {
  const levels: [pino.Level, number][] = [
    ['fatal', 2],
    ['error', 3],
    ['warn', 4],
    ['info', 6],
    ['debug', 7],
    ['trace', 7],
  ];
  for (const [level, priority] of levels) {
    test(`given a ${level} event, then the line starts with <${priority}>`, () => {
      const { logger, lines } = journalLogger();
      logger[level]('something happened');
      assert.deepEqual(lines, [`<${priority}>something happened\n`]);
      assert.equal(journalPriority(pino.levels.values[level] ?? 0), priority);
    });
  }

  test("given a loop's child logger with fields, then `loop: message`, no fields, no JSON, no timestamp", () => {
    const { logger, lines } = journalLogger();
    logger.child({ loop: 'greenhouse' }).warn({ valueC: 41.5 }, 'sensor reading out of range');
    assert.deepEqual(lines, ['<4>greenhouse: sensor reading out of range\n']);
  });

  test('given an error with a cause chain, then its message and every cause on one line', () => {
    const { logger, lines } = journalLogger();
    const root = new Error('EIO: i/o error, write');
    const error = new Error('relay pin 17 failed', {
      cause: new Error('gpio write failed', { cause: root }),
    });
    logger.child({ loop: 'boiler' }).error({ err: error }, 'could not drive the actuator');
    assert.deepEqual(lines, [
      '<3>boiler: could not drive the actuator: relay pin 17 failed: gpio write failed: EIO: i/o error, write\n',
    ]);
  });

  test('given logger.error(err) (the message is the error), then it is said once', () => {
    const { logger, lines } = journalLogger();
    logger.fatal(new Error('database is locked', { cause: new Error('SQLITE_BUSY') }));
    assert.deepEqual(lines, ['<2>database is locked: SQLITE_BUSY\n']);
  });

  test('given a refused connection (an AggregateError with no message), then the errors of every address', () => {
    const { logger, lines } = journalLogger();
    const refused = Object.assign(
      new AggregateError([
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1883'), { code: 'ECONNREFUSED' }),
        Object.assign(new Error('connect ECONNREFUSED ::1:1883'), { code: 'ECONNREFUSED' }),
      ]),
      { code: 'ECONNREFUSED' },
    );
    logger.warn({ err: refused }, 'MQTT connection failed');
    assert.deepEqual(lines, [
      '<4>MQTT connection failed: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1883; connect ECONNREFUSED ::1:1883\n',
    ]);
  });

  test('given an error logged as a string (err: error.message), then it ends the line', () => {
    const { logger, lines } = journalLogger();
    logger.error({ err: 'disk full' }, 'command not handled');
    assert.deepEqual(lines, ['<3>command not handled: disk full\n']);
  });

  test('given a multi-line message, then one journal line (journald splits on newlines)', () => {
    const { logger, lines } = journalLogger();
    logger.error('config: two problems\n  loops.a: unknown kind\n  loops.b: no sensor');
    assert.deepEqual(lines, ['<3>config: two problems loops.a: unknown kind loops.b: no sensor\n']);
  });

  test('given any event, then no line is JSON', () => {
    const { logger, lines } = journalLogger();
    logger.info({ signal: 'SIGTERM' }, 'SIGTERM: driving actuators to their safe state');
    logger.child({ loop: 'x' }).error({ err: new Error('boom') }, 'start failed');
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assert.match(line, /^<\d>[^{\n]*\n$/);
      assert.throws(() => JSON.parse(line.slice(3)));
    }
  });
});

describe('createLogger on the real stdout', () => {
  /** Runs createLogger in a child whose JOURNAL_STREAM is its own stdout's dev:ino (as systemd sets it). */
  function childOutput(format: string | undefined, journalStreamIsStdout: boolean): string {
    const script = `
      import { fstatSync } from 'node:fs';
      import { createLogger } from './src/logger.ts';
      const { dev, ino } = fstatSync(1, { bigint: true });
      process.env.JOURNAL_STREAM = ${journalStreamIsStdout} ? dev + ':' + ino : dev + ':' + (ino + 1n);
      const logger = createLogger(${format === undefined ? '{}' : `{ format: '${format}' }`});
      logger.child({ loop: 'boiler' }).warn({ err: new Error('no reply', { cause: new Error('timeout') }) }, 'sensor lost');
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, LOG_LEVEL: 'info' },
    });
    assert.equal(child.stderr, '');
    return child.stdout;
  }

  test('given stdout is the journal stream and no format, then journal lines', () => {
    assert.equal(childOutput(undefined, true), '<4>boiler: sensor lost: no reply: timeout\n');
  });

  test('given stdout is the journal stream and --log-format json, then JSON lines', () => {
    const record = JSON.parse(childOutput('json', true)) as { level: number; loop: string; msg: string };
    assert.deepEqual([record.level, record.loop, record.msg], [40, 'boiler', 'sensor lost']);
  });

  test('given JOURNAL_STREAM names another stream (stdout piped), then JSON lines', () => {
    assert.equal((JSON.parse(childOutput(undefined, false)) as { msg: string }).msg, 'sensor lost');
  });

  test('given a terminal (pretty), then the line ends with the error and its causes, as in the journal', () => {
    // `[16:07:00] WARN: boiler: sensor lost: no reply: timeout` (no colours: stdout is a pipe here).
    assert.match(
      childOutput('pretty', false),
      /^\[\d\d:\d\d:\d\d\] WARN: boiler: sensor lost: no reply: timeout\n$/,
    );
  });
});

describe('readable message: what the pretty format and the journal both show', () => {
  const cases: Array<[name: string, record: Record<string, unknown>, text: string]> = [
    ['a message', { msg: 'homeostat stopped' }, 'homeostat stopped'],
    ['a loop', { msg: 'cycle failed', loop: 'room' }, 'room: cycle failed'],
    [
      'an error with causes (as pino serialized it)',
      { msg: 'start failed', err: { message: 'open var/x.db: EACCES: permission denied' } },
      'start failed: open var/x.db: EACCES: permission denied',
    ],
    [
      'logger.error(err): the message is the error',
      { msg: 'boom: cause', err: { message: 'boom: cause' } },
      'boom: cause',
    ],
    [
      'an error with an empty message and a code',
      { msg: 'listen failed', err: { message: '', code: 'EADDRINUSE' } },
      'listen failed: EADDRINUSE',
    ],
    ['no message, an error', { err: { message: 'x' } }, 'x'],
  ];
  for (const [name, record, text] of cases) {
    test(`given ${name}, then \`${text}\``, () => {
      assert.equal(readableMessage(record), text);
    });
  }
});

describe('readableMessage says each part of an error once', () => {
  const serialized = (msg: string, error: Error) => {
    const lines: string[] = [];
    pino({}, { write: (line: string) => lines.push(line) }).error({ err: error }, msg);
    return JSON.parse(lines[0]!) as Record<string, unknown>;
  };
  const cases = [
    {
      given: 'a message that already quotes the error and its cause',
      msg: "database /x/h.db failed (ENOENT: mkdir '/x'): regulating on: cannot open database /x/h.db: ENOENT: mkdir '/x'",
      error: new Error("cannot open database /x/h.db: ENOENT: mkdir '/x'", {
        cause: new Error("ENOENT: mkdir '/x'"),
      }),
      want: "database /x/h.db failed (ENOENT: mkdir '/x'): regulating on: cannot open database /x/h.db: ENOENT: mkdir '/x'",
    },
    {
      given: 'a message that says neither',
      msg: 'start failed',
      error: new Error('open db', { cause: new Error('EACCES: permission denied') }),
      want: 'start failed: open db: EACCES: permission denied',
    },
    {
      given: 'a message that quotes the error but not its cause',
      msg: 'cycle failed (gpio write failed)',
      error: new Error('gpio write failed', { cause: new Error('EIO: i/o error, write') }),
      want: 'cycle failed (gpio write failed): EIO: i/o error, write',
    },
  ];
  for (const { given, msg, error, want } of cases) {
    test(`given ${given}, then ${JSON.stringify(want)}`, () => {
      assert.equal(readableMessage(serialized(msg, error)), want);
    });
  }
});
