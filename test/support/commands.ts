/**
 * The command path (DesiredCommands) around a real DesiredStore, for the control tests: a fake
 * daemon that records the cycles it is asked for, a recording logger, a `send` that submits a
 * payload as a transport would, and store calls that can be made to fail (`failing`: method
 * names that throw "database or disk is full").
 */
import { join } from 'node:path';
import type { Config } from '../../src/config/schema.js';
import type { ChangeLimit } from '../../src/control/change-limiter.js';
import type { CommandKind } from '../../src/control/commands.js';
import type { CommandSource } from '../../src/control/desired-commands.js';
import { DesiredCommands } from '../../src/control/desired-commands.js';
import type { LoopControl } from '../../src/control/loop-control.js';
import type { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { recordingLogger, silentLogger } from './logger.js';
import { makeTempDir } from './tmp.js';

export function commandPath(opts: {
  config: Config;
  desired: DesiredStore;
  clock: ManualClock;
  changeLimit?: ChangeLimit;
  failing?: string[];
  defaultSource?: CommandSource;
}) {
  const { config, clock } = opts;
  const failing = new Set(opts.failing ?? []);
  const desired = new Proxy(opts.desired, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing.has(String(prop))) throw new Error('database or disk is full');
        return value.apply(target, args);
      };
    },
  }) as DesiredStore;
  const triggers: { loop: string; reason: string }[] = [];
  const control: LoopControl = {
    currentConfig: () => config,
    statuses: () => [],
    triggerLoop: (loop, reason) => void triggers.push({ loop, reason }),
    requestFaultReset: () => ({ accepted: false, reason: 'not in these tests' }),
  };
  const log = recordingLogger();
  const commands = new DesiredCommands({
    control,
    desired,
    clock,
    logger: log.logger,
    ...(opts.changeLimit === undefined ? {} : { changeLimit: opts.changeLimit }),
  });
  const send = (kind: CommandKind, payload: string, loop: string, source = opts.defaultSource ?? 'mqtt') =>
    commands.submit({ loop, kind, payload: Buffer.from(payload), source, receivedAtMs: clock.nowMs() });
  const row = (loop: string) => opts.desired.desired(loop)!;
  return { commands, send, triggers, log, row };
}

/** A desired and state store on a SQLite file in a temp dir; `cleanups` gets its closing and removal. */
export function storeOnFile(clock: ManualClock, cleanups: (() => void)[]) {
  const { dir, remove } = makeTempDir('homeostat-commands-');
  cleanups.push(remove);
  const { db } = openStore({ path: join(dir, 'state.db'), logger: silentLogger, nowMs: () => clock.nowMs() });
  cleanups.push(() => db.close());
  return { desired: new DesiredStore(db, () => clock.nowMs()), state: new StateStore(db) };
}
