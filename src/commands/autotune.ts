import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AutotuneBody, AutotuneView, DaemonApi, LoopTuningView, WriteResult } from './api-client.js';
import { noDaemonNotice, reachDaemon } from './cli-config.js';

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
/** The daemon's default time limit (core/tuning/autotune.ts DEFAULT_MAX_DURATION_MS). */
const DEFAULT_LIMIT_MS = 48 * 3_600_000;
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
  const reached = await reachDaemon(
    { configPath: opts.configPath, apiUrl: opts.apiUrl, access: 'write' },
    note,
  );
  if (reached.kind === 'error') {
    (reached.code === 2 ? note : write)(`homeostat autotune: ${reached.message}`);
    return reached.code;
  }
  if (reached.kind !== 'api') {
    say(
      `${noDaemonNotice(reached)}: an autotune runs in the daemon and cannot run from the database; start it first`,
    );
    return 1;
  }
  const { api } = reached;
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
  const previous = JSON.stringify(start.before.autotune ?? null);
  let seenRun = false;
  let idlePolls = 0;
  let lost = false;
  let last: { key: string; elapsedMs: number } | undefined;
  try {
    for (;;) {
      const answer = await api.loop(loop);
      if (answer.kind === 'error') {
        write(`homeostat autotune: ${answer.message}`);
        return 1;
      }
      if (answer.kind === 'unreachable') {
        if (!lost)
          write(`${loop}: ${noDaemonNotice(answer)}; still trying (the run, if any, lives in the daemon)`);
        lost = true;
      } else {
        if (lost) write(`${loop}: the daemon answers again`);
        lost = false;
        const view = answer.value;
        const run = view.autotune ?? undefined;
        const observed = view.observedGeneration >= start.generation;
        const isNew = run !== undefined && (seenRun || JSON.stringify(run) !== previous);
        const refused = view.tuning?.refused;
        if (!seenRun && refused && refused.generation === start.generation) {
          write(`homeostat autotune: ${loop}: the loop did not start it: ${refused.reason}`);
          return 1;
        }
        if (run && isNew && active(run)) {
          if (!seenRun) write(`${loop}: autotune started: ${equipmentLine(view, opts, run)}`);
          seenRun = true;
          const line = progressLine(view, run);
          const elapsedMs = msOf(run.elapsedMs, run.elapsedS) ?? 0;
          if (!last || last.key !== line.key || elapsedMs - last.elapsedMs >= HEARTBEAT_MS) {
            write(`${loop}: ${line.text}`);
            last = { key: line.key, elapsedMs };
          }
        } else if (run && isNew && observed) {
          return finish(api, opts, { view, run, before: start.before }, write);
        } else if (observed && ++idlePolls > GRACE_POLLS) {
          write(
            `homeostat autotune: ${loop}: the daemon took the request (generation ${start.generation}) but started no run: see homeostat events --loop ${loop}`,
          );
          return 1;
        }
      }
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

export function active(run: AutotuneView): boolean {
  return run.phase === 'noise' || run.phase === 'relay';
}

const msOf = (ms: number | null | undefined, s: number | null | undefined) =>
  typeof ms === 'number' ? ms : typeof s === 'number' ? s * 1000 : undefined;

/** What the run does to the equipment, in one line. */
export function equipmentLine(
  view: Pick<LoopTuningView, 'quantity' | 'unit' | 'mode' | 'setpoint' | 'actuators' | 'step'>,
  opts: Pick<AutotuneCommandOptions, 'side' | 'maxDurationS'>,
  run?: AutotuneView,
): string {
  const side = (run?.side ?? opts.side ?? sideOfMode(view.mode)) as 'raise' | 'lower' | undefined;
  const ids = Object.keys(view.actuators);
  const what = equipmentWord(view.quantity, side);
  const named = ids.length === 1 ? `${what} (${ids[0]})` : what;
  const digits = Math.max(1, decimalsOf(view.step ?? 0.1));
  const limitMs =
    run && run.phase === 'noise' && run.remainingIsLimit
      ? (msOf(run.elapsedMs, run.elapsedS) ?? 0) + (msOf(run.remainingMs, run.remainingS) ?? 0)
      : opts.maxDurationS === undefined
        ? DEFAULT_LIMIT_MS
        : opts.maxDurationS * 1000;
  return `switches ${named} on and off around ${view.setpoint.toFixed(digits)} ${view.unit} until the oscillation is steady; at most ${duration(limitMs)}; the safety limits stay active; Ctrl-C stops watching, not the run`;
}

function sideOfMode(mode: string): 'raise' | 'lower' | undefined {
  if (mode === 'heat' || mode === 'humidify') return 'raise';
  if (mode === 'cool' || mode === 'dehumidify') return 'lower';
  return undefined;
}

function equipmentWord(quantity: string, side: 'raise' | 'lower' | undefined): string {
  if (side === undefined) return 'the actuator';
  if (quantity === 'temperature') return side === 'raise' ? 'the heater' : 'the cooler';
  if (quantity === 'humidity') return side === 'raise' ? 'the humidifier' : 'the dehumidifier';
  return side === 'raise' ? 'the raising actuator' : 'the lowering actuator';
}

/** One progress line and what makes it new (phase and cycles; time alone does not). */
export function progressLine(
  view: Pick<LoopTuningView, 'unit'>,
  run: AutotuneView,
): { key: string; text: string } {
  const elapsed = duration(msOf(run.elapsedMs, run.elapsedS) ?? 0);
  const remainingMs = msOf(run.remainingMs, run.remainingS);
  const left =
    remainingMs === undefined
      ? ''
      : ` · ${run.remainingIsLimit ? 'at most' : 'about'} ${duration(remainingMs)} left`;
  if (run.phase === 'noise') {
    return {
      key: 'noise',
      text: `measuring the sensor noise (output held) · elapsed ${elapsed}${left}`,
    };
  }
  const cycles = `cycles ${run.cycles ?? 0}/${run.cyclesNeeded ?? '?'}`;
  const band =
    typeof run.hysteresis === 'number' ? ` · band ±${significant(run.hysteresis)} ${view.unit}` : '';
  return { key: `${run.phase} ${cycles}`, text: `relay ${cycles}${band} · elapsed ${elapsed}${left}` };
}

/** The result: model ± standard error, gains, suggested modulation (lines without the loop). */
export function resultLines(run: AutotuneView, unit: string): string[] {
  const r = run.result;
  if (!r) return [];
  const took = msOf(run.elapsedMs, run.elapsedS);
  const se = r.standardError;
  const ambient = typeof r.ambient === 'number' ? `, ambient ${significant(r.ambient)} ${unit}` : '';
  const residual =
    typeof r.rmsResidual === 'number' ? `; rms residual ${significant(r.rmsResidual)} ${unit}` : '';
  const closed = typeof r.closedLoopS === 'number' ? ` (SIMC, τc ${significant(r.closedLoopS)} s)` : '';
  const weight =
    typeof r.setpointWeight === 'number' ? `, setpoint weight ${significant(r.setpointWeight)}` : '';
  const lines = [
    `autotune done: ${run.cycles ?? '?'} cycles${took === undefined ? '' : ` in ${duration(took)}`}`,
    `model: gain ${plusMinus(r.gain, se?.gain)} ${unit} at full output, τ ${plusMinus(r.timeConstantS, se?.timeConstantS)} s, θ ${plusMinus(r.deadTimeS, se?.deadTimeS)} s${ambient}${residual}`,
    `gains: kp ${significant(r.kp)}, tiS ${significant(r.tiS)}, tdS ${significant(r.tdS)}${weight}${closed}`,
  ];
  if (typeof r.windowS === 'number') {
    const band = typeof r.band === 'number' ? ` (or a duty band of ±${significant(r.band)} ${unit})` : '';
    lines.push(
      `suggested relay modulation: a time-proportioning window of ${significant(r.windowS)} s${band}`,
    );
  }
  return lines;
}

function plusMinus(value: number, se: number | null | undefined): string {
  return typeof se === 'number' && Number.isFinite(se)
    ? `${significant(value)} ± ${significant(se)}`
    : `${significant(value)} (± unknown)`;
}

/** Three significant digits, never in exponent notation (below 0.001: six decimals at most). */
export function significant(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) < 0.001)
    return value
      .toFixed(6)
      .replace(/\.?0+$/, '')
      .replace(/^-0$/, '0');
  return String(Number(value.toPrecision(3)));
}

const decimalsOf = (step: number) => (String(step).split('.')[1] ?? '').length;

/** 45 s, 12 min, 3 h 05 min. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 90) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h} h` : `${h} h ${String(m).padStart(2, '0')} min`;
}
