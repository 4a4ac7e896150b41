/**
 * The daemon as `homeostat run` builds it — a real SQLite store in `dbPath` behind the store
 * supervisor, a manual clock — for tests that need the store (reload, commands, latched faults,
 * storage faults). Not a test file itself.
 */
import assert from 'node:assert/strict';
import pino, { type Logger } from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import type { LoopStatus } from '../../src/core/status.js';
import { Daemon } from '../../src/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { StoreSupervisor } from '../../src/store/supervisor.js';

export const silentLogger = pino({ level: 'silent' });

/**
 * Starts a daemon on config `text` with its store in `dbPath`; `clock` defaults to a new manual
 * one. `db` is the database in use (it changes when the supervisor recovers or reopens the file).
 */
export async function startStoreDaemon(
  text: string,
  dbPath: string,
  clock = new ManualClock(Date.UTC(2026, 0, 1)),
  options: { logger?: Logger; onStatus?: (status: LoopStatus) => void } = {},
) {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const logger = options.logger ?? silentLogger;
  const store = new StoreSupervisor({ path: dbPath, clock, logger, retention: loaded.config.storage });
  const daemon = new Daemon({
    config: loaded.config,
    configText: text,
    clock,
    logger,
    store,
    statusEveryMs: 0,
    ...(options.onStatus ? { onStatus: options.onStatus } : {}),
  });
  await daemon.start();
  return {
    daemon,
    store,
    clock,
    get db() {
      return store.database;
    },
  };
}
