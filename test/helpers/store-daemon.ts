/**
 * The daemon as `homeostat run` builds it — a real SQLite store in `dbPath`, a manual clock —
 * for tests that need the store (reload, commands, latched faults). Not a test file itself.
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';

export const silentLogger = pino({ level: 'silent' });

/** Starts a daemon on config `text` with its store in `dbPath`; `clock` defaults to a new manual one. */
export async function startStoreDaemon(
  text: string,
  dbPath: string,
  clock = new ManualClock(Date.UTC(2026, 0, 1)),
) {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: () => clock.nowMs() });
  const store = { desired: new DesiredStore(db, () => clock.nowMs()), state: new StateStore(db) };
  const daemon = new Daemon({
    config: loaded.config,
    configText: text,
    clock,
    logger: silentLogger,
    store,
    statusEveryMs: 0,
  });
  await daemon.start();
  return { daemon, store, clock, db };
}
