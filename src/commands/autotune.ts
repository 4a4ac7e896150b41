import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatElapsed as duration } from '../core/time.js';
import type {
  ApiAnswer,
  AutotuneBody,
  AutotuneView,
  DaemonApi,
  LoopTuningView,
  WriteResult,
} from './api-client.js';
import { active, equipmentLine, msOf, progressLine, resultLines, significant } from './autotune-lines.js';
import { noDaemonNotice, reachRunningDaemon } from './cli-config.js';

export { active, duration, equipmentLine, progressLine, resultLines, significant };

/**
 * `homeostat autotune LOOP`: asks the running daemon to start a relay autotune on the loop
 * (POST /api/loops/{loop}/autotune), then follows it by polling the loop's status: one line
 * saying what happens to the equipment, a progress line on each change, and at the end the
 * identified model, the gains and the next step. The run lives in the daemon: Ctrl-C stops
 * watching, never the run (`--cancel` stops it). Without a daemon nothing can run: the database
 * cannot start one.
 *
 * Exit codes: 0 done (or, with --no-wait / --cancel, accepted); 1 refused, aborted, no daemon,
 * an error answer; 2 usage; 130 Ctrl-C while following (the run goes on).
 */
type Write = (line: string) => void;

export interface AutotuneCommandOptions {
  configPath: string;
  apiUrl?: string;
  loop: string;
  side?: 'raise' | 'lower';
  closedLoopS?: number;
  maxDurationS?: number;
  /** `--no-wait`: return once the daemon accepted the request. */
  wait: boolean;
  /** `--cancel`: stop the loop's running autotune. */
  cancel: boolean;
  /** Between two status requests while following, ms. Default POLL_MS. */
  pollMs?: number;
  /** Aborted: stop following (Ctrl-C). Default: SIGINT while following. */
  stop?: AbortSignal;
}

/** The status changes once a control cycle (10 s or more): every 3 s sees each change soon. */
export const POLL_MS = 3_000;
/** A progress line at least this often (daemon time) when nothing else changed. */
const HEARTBEAT_MS = 30 * 60_000;
/** Polls after the request was observed with no new run before saying none started. */
const GRACE_POLLS = 2;
/** Polls after `done` waiting for the stored tuning to show in the status. */
const TUNING_POLLS = 3;

export const INTERRUPTED_EXIT = 130;

export async function autotuneCommand(
  opts: AutotuneCommandOptions,
  write: Write,
  note: Write,
): Promise<number> {
  const say = (line: string) => write(`homeostat autotune: ${line}`);
  const api = await reachRunningDaemon(
    'autotune',
    opts,
    'an autotune runs in the daemon and cannot run from the database',
    { write, note },
  );
  if (typeof api === 'number') return api;
  const requestId = randomUUID().slice(0, 12);
  if (opts.cancel) {
    const answer = await send(api, opts.loop, { action: 'cancel', requestId }, say);
    if (typeof answer === 'number') return answer;
    write(
      `${opts.loop}: cancel accepted (generation ${answer.generation ?? '?'}): the run stops at the loop's next cycle`,
    );
    return 0;
  }
  const before = await api.loop(opts.loop);
  if (before.kind !== 'ok') {
    say(
      before.kind === 'error'
        ? before.message
        : `${noDaemonNotice(before)}: the loop's status is needed first`,
    );
    return 1;
  }
  const body: AutotuneBody = {
    action: 'start',
    ...(opts.side === undefined ? {} : { side: opts.side }),
    ...(opts.closedLoopS === undefined ? {} : { closedLoopS: opts.closedLoopS }),
    ...(opts.maxDurationS === undefined ? {} : { maxDurationS: opts.maxDurationS }),
    requestId,
  };
  const answer = await send(api, opts.loop, body, say);
  if (typeof answer === 'number') return answer;
  const generation = answer.generation ?? before.value.generation + 1;
  if (!opts.wait) {
    write(
      `${opts.loop}: autotune accepted (generation ${generation}): ${equipmentLine(before.value, opts)}; progress in homeostat status, stop it with homeostat autotune ${opts.loop} --cancel`,
    );
    return 0;
  }
  return follow(api, opts, { before: before.value, generation }, write);
}

/** The POST; the answer when accepted, else the exit code with the reason said. */
async function send(
  api: DaemonApi,
  loop: string,
  body: AutotuneBody,
  say: Write,
): Promise<WriteResult | number> {
  const answer = await api.autotune(loop, body);
  if (answer.kind === 'error') {
    say(answer.message);
    return 1;
  }
  if (answer.kind === 'unreachable') {
    say(
      answer.cause === 'refused'
        ? `${noDaemonNotice(answer)}: an autotune runs in the daemon`
        : `the daemon at ${answer.url}: ${answer.why}: the request may or may not have arrived; check with homeostat status`,
    );
    return 1;
  }
  if (!answer.value.accepted) {
    say(`${loop}: refused: ${answer.value.reason ?? 'no reason given'}`);
    return 1;
  }
  return answer.value;
}

interface Started {
  before: LoopTuningView;
  generation: number;
}

/** Follows the run until it ends (or Ctrl-C); the exit code. */
async function follow(
  api: DaemonApi,
  opts: AutotuneCommandOptions,
  start: Started,
  write: Write,
): Promise<number> {
  const { loop } = opts;
  const interrupt = opts.stop ? undefined : sigint();
  const stop = opts.stop ?? interrupt!.signal;
  const pollMs = opts.pollMs ?? POLL_MS;
  const watch: Watch = {
    previous: JSON.stringify(start.before.autotune ?? null),
    seenRun: false,
    idlePolls: 0,
    lost: false,
  };
  try {
    for (;;) {
      const code = await onAnswer(await api.loop(loop), { api, opts, start, watch, write });
      if (code !== undefined) return code;
      await sleep(pollMs, undefined, { signal: stop });
    }
  } catch (error) {
    if (!stop.aborted) throw error;
    write(
      `${loop}: stopped watching; the autotune goes on in the daemon (homeostat status shows it, homeostat autotune ${loop} --cancel stops it)`,
    );
    return INTERRUPTED_EXIT;
  } finally {
    interrupt?.dispose();
  }
}

/** What the follower remembers between polls. */
interface Watch {
  /** The loop's autotune before the request (a run equal to it is the old one). */
  previous: string;
  seenRun: boolean;
  idlePolls: number;
  /** The daemon stopped answering (said once, and once when it answers again). */
  lost: boolean;
  last?: { key: string; elapsedMs: number };
}

interface Following {
  api: DaemonApi;
  opts: AutotuneCommandOptions;
  start: Started;
  watch: Watch;
  write: Write;
}

/** One poll's answer: the exit code once the run ended (or failed to start), else undefined. */
async function onAnswer(
  answer: ApiAnswer<LoopTuningView>,
  { api, opts, start, watch, write }: Following,
): Promise<number | undefined> {
  const { loop } = opts;
  if (answer.kind === 'error') {
    write(`homeostat autotune: ${answer.message}`);
    return 1;
  }
  if (answer.kind === 'unreachable') {
    if (!watch.lost)
      write(`${loop}: ${noDaemonNotice(answer)}; still trying (the run, if any, lives in the daemon)`);
    watch.lost = true;
    return undefined;
  }
  if (watch.lost) write(`${loop}: the daemon answers again`);
  watch.lost = false;
  const view = answer.value;
  const run = view.autotune ?? undefined;
  const observed = view.observedGeneration >= start.generation;
  const isNew = run !== undefined && (watch.seenRun || JSON.stringify(run) !== watch.previous);
  const refused = view.tuning?.refused;
  if (!watch.seenRun && refused && refused.generation === start.generation) {
    write(`homeostat autotune: ${loop}: the loop did not start it: ${refused.reason}`);
    return 1;
  }
  if (run && isNew && active(run)) {
    if (!watch.seenRun) write(`${loop}: autotune started: ${equipmentLine(view, opts, run)}`);
    watch.seenRun = true;
    const line = progressLine(view, run);
    const elapsedMs = msOf(run.elapsedMs, run.elapsedS) ?? 0;
    if (!watch.last || watch.last.key !== line.key || elapsedMs - watch.last.elapsedMs >= HEARTBEAT_MS) {
      write(`${loop}: ${line.text}`);
      watch.last = { key: line.key, elapsedMs };
    }
  } else if (run && isNew && observed) {
    return finish(api, opts, { view, run, before: start.before }, write);
  } else if (observed && ++watch.idlePolls > GRACE_POLLS) {
    write(
      `homeostat autotune: ${loop}: the daemon took the request (generation ${start.generation}) but started no run: see homeostat events --loop ${loop}`,
    );
    return 1;
  }
  return undefined;
}

/** Aborted on the first Ctrl-C, for the time the command follows a run. */
function sigint(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSignal) };
}

/** The run ended: the result and the next step (0), or the reason it stopped (1). */
async function finish(
  api: DaemonApi,
  opts: AutotuneCommandOptions,
  ended: { view: LoopTuningView; run: AutotuneView; before: LoopTuningView },
  write: Write,
): Promise<number> {
  const { loop } = opts;
  const { run } = ended;
  if (run.phase !== 'done' || !run.result) {
    write(`${loop}: autotune ${run.phase}: ${run.abortReason ?? run.reason ?? 'no reason given'}`);
    write(
      `  the loop regulates with its tuning in force as before (homeostat events --loop ${loop} tells more)`,
    );
    return 1;
  }
  const [head, ...rest] = resultLines(run, ended.view.unit);
  write(`${loop}: ${head}`);
  for (const line of rest) write(`  ${line}`);
  const latestBefore = ended.before.tuning?.latest ?? null;
  let tuning = ended.view.tuning;
  // The result is stored in the cycle that finished it; a status a little older waits a poll.
  for (let i = 0; tuning && (tuning.latest ?? null) === latestBefore && i < TUNING_POLLS; i++) {
    await sleep(opts.pollMs ?? POLL_MS);
    const again = await api.loop(loop);
    if (again.kind === 'ok') tuning = again.value.tuning;
  }
  const version = tuning?.latest ?? null;
  if (tuning && version !== null && version !== latestBefore) {
    write(
      tuning.active === version
        ? `${loop}: applied automatically as tuning version ${version} (homeostat tuning ${loop} config goes back to the config file's gains)`
        : `${loop}: stored as tuning version ${version}, not applied: accept it with homeostat tuning ${loop} latest`,
    );
  } else {
    write(
      `${loop}: accept it with homeostat tuning ${loop} latest (homeostat tunings ${loop} lists the versions)`,
    );
  }
  return 0;
}
