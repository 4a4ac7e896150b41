/**
 * `homeostat safe`: the last line of defence when the daemon itself dies. systemd runs it from
 * `ExecStopPost=` whatever ended the process (SIGKILL, out of memory, a crash, the watchdog),
 * and it drives every GPIO relay to its safe level: a sysfs GPIO output keeps its last level
 * when the process holding it is gone, so a heater left ON stays ON until the daemon is back
 * (a minute or more after a watchdog kill).
 *
 * It needs nothing but sysfs and either the config file or the last config the daemon applied
 * (the safe manifest beside the database, src/safe/manifest.ts): a config edited into a typo must
 * not leave a relay ON. No SQLite, no broker, no onoff (whose sysfs root is fixed and whose
 * native addon may be what broke). What is driven, from which source, is in safe-sources.ts;
 * how each pin is driven without a glitch, in src/safe/gpio.ts.
 *
 * Bounded in time: pins are driven in parallel, each within its own deadline (2 s), MQTT at
 * the same time within its own (2 s), the whole within {@link DEFAULT_DEADLINE_MS}, below the
 * unit's TimeoutStopSec (30 s). A sysfs call the kernel never answers holds a libuv thread,
 * and libuv joins its threads at exit, so such a process would never end (not even with
 * process.exit): then the report is flushed and the process ends itself with SIGKILL.
 *
 * MQTT actuators are best effort (safe-mqtt.ts): their safe command is sent only if the broker
 * answers within 2 s. What protects a plug without a broker is its own dead man's switch
 * (`deadManS`: Tasmota PulseTime, Zigbee2MQTT on_time); the report says which plugs have one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { driveRelaySafe, rawOf, type SafeOutcome, type SafeRelay, type SysfsIo } from '../safe/gpio.js';
import { safeManifestCandidates } from '../safe/manifest.js';
import type { SafePlug } from '../safe/plan.js';
import { driveAllPwmsSafe } from '../safe/pwm.js';
import { drained } from './output.js';
import { chooseTargets, type SafeTargets } from './safe-sources.js';

export {
  driveAllSafe,
  driveRelaySafe,
  fileSysfsIo,
  type SafeGpioOptions,
  type SafeOutcome,
  type SafeRelay,
  type SysfsIo,
} from '../safe/gpio.js';
export { planFromBrokenText, planFromConfig, type SafePlan } from '../safe/plan.js';

// ---------------------------------------------------------------------------------------
// The command

export interface SafeCommandOptions {
  configPath: string;
  /** Overrides the sysfs root of the config and the manifest (tests; a Pi always uses /sys). */
  sysfsRoot?: string | undefined;
  io?: SysfsIo | undefined;
  pinTimeoutMs?: number | undefined;
  /**
   * The daemon's database: its safe manifest (`<db>.safe.json`) is the last applied config;
   * and when a running daemon holds its lock (this start was refused because another one
   * runs, e.g. one started by hand), its actuators are its own and are not touched.
   */
  dbPath?: string | undefined;
  /** A process's cgroup (`/proc/<pid>/cgroup`), undefined when it cannot be read; tests pass a fake. */
  cgroupOf?: ((pid: number | 'self') => string | undefined) | undefined;
  /** systemd passes how the service ended to ExecStopPost= ($SERVICE_RESULT, $EXIT_CODE, $EXIT_STATUS). */
  env?: NodeJS.ProcessEnv | undefined;
  /**
   * Longest wait for the broker (connecting and every acknowledgement), ms; 0 = do not try.
   * Default {@link DEFAULT_MQTT_TIMEOUT_MS}.
   */
  mqttTimeoutMs?: number | undefined;
  /** Longest run of the whole drive (GPIO and MQTT), ms. Default {@link DEFAULT_DEADLINE_MS}. */
  deadlineMs?: number | undefined;
  /** Lines about the sources (a config set aside, the manifest used); default stderr. */
  note?: ((line: string) => void) | undefined;
  /** Wall clock, for the manifest's age. */
  nowMs?: (() => number) | undefined;
  /**
   * Called when pins' work is still running as the command returns (a sysfs call the kernel
   * never answered). Default with real files (no `io`): flush the output and end the process
   * with SIGKILL, as nothing else can end it; with an injected `io`: nothing.
   */
  onHungCalls?: ((pending: () => string[]) => void) | undefined;
}

/** How long `safe` gives the broker: long enough for a broker on the LAN, short for a stop. */
export const DEFAULT_MQTT_TIMEOUT_MS = 2_000;
/**
 * The whole drive, ms: pins (2 s each, in parallel) and MQTT (2 s) run side by side, so this
 * is a backstop, well below the unit's TimeoutStopSec=30 (test/commands/safe-deadline.test.ts).
 */
export const DEFAULT_DEADLINE_MS = 10_000;

/**
 * Drives every GPIO relay and PWM output to its safe level and (best effort, bounded) sends every MQTT actuator
 * its safe command, all at once, and prints one line per actuator. Exit 0 when every GPIO relay
 * reached its safe level and the relays came from a valid config or the last applied one;
 * 1 otherwise, with one line per relay not confirmed safe. MQTT never changes the exit code.
 */
export async function safeCommand(opts: SafeCommandOptions, write: (line: string) => void): Promise<number> {
  const note = opts.note ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const env = opts.env ?? process.env;
  if (env.SERVICE_RESULT !== undefined) {
    write(
      `homeostat safe: service ended (result ${env.SERVICE_RESULT}, ${env.EXIT_CODE ?? '?'} ${env.EXIT_STATUS ?? '?'})`,
    );
  }
  const running =
    opts.dbPath === undefined ? undefined : await runningDaemon(opts.dbPath, opts.cgroupOf ?? procCgroup);
  if (running !== undefined) {
    write(`homeostat safe: ${running}; not touching the actuators it regulates`);
    return 0;
  }
  // Beside the database, else the copy in the state directory (the config that placed the
  // database elsewhere may be the file that no longer parses: the CLI then gave the default).
  const candidates = opts.dbPath === undefined ? [] : safeManifestCandidates(opts.dbPath, env);
  const manifestPath = candidates.find((path) => existsSync(path)) ?? candidates[0];
  const targets = chooseTargets(opts.configPath, manifestPath, (opts.nowMs ?? Date.now)(), note);
  if (!targets.ok) {
    note(targets.error);
    return 1;
  }
  const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const unsettled = new Set<SafeRelay>();
  const pwmLines: string[] = [];
  const [driven, plugLines, pwmFailed] = await Promise.all([
    driveTargets(targets, { ...opts, deadlineMs, unsettled }),
    mqttBestEffort(targets, Math.min(opts.mqttTimeoutMs ?? DEFAULT_MQTT_TIMEOUT_MS, deadlineMs)),
    driveAllPwmsSafe(targets.groups, { ...opts, timeoutMs: opts.pinTimeoutMs }, (line) =>
      pwmLines.push(line),
    ),
  ]);
  const hasPwm = targets.groups.some((group) => group.pwms.length > 0);
  const failed = report(driven, write, hasPwm) + pwmFailed;
  for (const line of pwmLines) write(line);
  for (const line of plugLines) write(line);
  const onHung = opts.onHungCalls ?? (opts.io === undefined ? endDespiteHungCalls(note) : undefined);
  if (unsettled.size > 0) onHung?.(() => [...unsettled].map(pinName));
  if (!targets.trusted) {
    note('homeostat safe: exit 1: the relays above are a guess from an invalid config; others may be wired');
  }
  return failed === 0 && targets.trusted ? 0 : 1;
}

/** Every relay of every group at once, each within its own deadline, all within `deadlineMs`. */
async function driveTargets(
  targets: SafeTargets,
  opts: SafeCommandOptions & { deadlineMs: number; unsettled: Set<SafeRelay> },
): Promise<[SafeRelay, SafeOutcome][]> {
  const done = new Map<SafeRelay, SafeOutcome>();
  const overall = new AbortController();
  const all = targets.groups.flatMap((group) => group.relays.map((relay) => ({ relay, group })));
  const work = Promise.all(
    all.map(({ relay, group }) =>
      driveRelaySafe(relay, {
        sysfsRoot: opts.sysfsRoot ?? group.sysfsRoot,
        chip: group.chip,
        io: opts.io,
        pinTimeoutMs: opts.pinTimeoutMs,
        signal: overall.signal,
        unsettled: opts.unsettled,
      }).then((outcome) => done.set(relay, outcome)),
    ),
  );
  await withinMs(work, opts.deadlineMs);
  overall.abort();
  const late = `no answer within the overall deadline of ${opts.deadlineMs} ms`;
  return all.map(({ relay }) => [relay, done.get(relay) ?? { id: relay.id, ok: false, error: late }]);
}

/** One line per relay, the summary, and one line per relay not confirmed safe; returns how many. */
function report(driven: [SafeRelay, SafeOutcome][], write: (line: string) => void, hasPwm: boolean): number {
  for (const [relay, outcome] of driven) write(describeOutcome(relay, outcome));
  const failed = driven.filter(([, outcome]) => !outcome.ok);
  if (driven.length === 0) {
    if (!hasPwm) write('homeostat safe: no GPIO relay in the config, nothing to drive');
    return 0;
  }
  write(
    `homeostat safe: ${driven.length - failed.length} of ${driven.length} GPIO relay(s) at their safe level` +
      (failed.length > 0 ? `; ${failed.length} FAILED` : ''),
  );
  for (const [relay] of failed) write(`homeostat safe: NOT CONFIRMED SAFE: ${pinName(relay)}`);
  return failed.length;
}

function pinName(relay: SafeRelay): string {
  return `${relay.id} (BCM ${relay.bcm})`;
}

/** Resolves when `promise` settles or after `ms`, whichever comes first (never rejects). */
function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    deadline,
  ]).finally(() => clearTimeout(timer));
}

/** How long pins' work that outlived its deadline may still finish before the process is ended, ms. */
const HUNG_GRACE_MS = 1_000;
const HUNG_POLL_MS = 50;

/**
 * The default for a sysfs call that never returns (a FIFO, a wedged GPIO expander): the
 * process cannot end by itself (the call holds a libuv thread, and libuv joins its threads at
 * exit, process.exit() included), so systemd would wait for it until TimeoutStopSec and kill
 * it without a word. Instead: wait {@link HUNG_GRACE_MS} (a slow call may still return; timers
 * are unref'd, so a process that can end, ends), then say which pins, flush the output, and
 * end with SIGKILL (a shell sees 137; systemd logs status=9/KILL and the unit as failed).
 */
function endDespiteHungCalls(note: (line: string) => void): (pending: () => string[]) => void {
  return (pending) => {
    const giveUpAtMs = Date.now() + HUNG_GRACE_MS;
    const check = () => {
      const names = pending();
      if (names.length === 0) return;
      if (Date.now() < giveUpAtMs) return void setTimeout(check, HUNG_POLL_MS).unref();
      note(
        `homeostat safe: a sysfs call for ${names.join(', ')} never returned (the kernel holds it); ` +
          'ending with SIGKILL, as the process could not exit while it is pending',
      );
      void drained().then(() => process.kill(process.pid, 'SIGKILL'));
    };
    setTimeout(check, HUNG_POLL_MS).unref();
  };
}

/**
 * Another daemon, running, that regulates these actuators now: the holder of the database's
 * lock, when it is a process of this host outside our own cgroup. Under systemd ExecStopPost
 * runs in the unit's cgroup, so the service's own daemon never counts, even one that is hung
 * in the kernel and outlived SIGKILL (it still holds the lock, but it no longer regulates: its
 * relays must be released). One started by hand is in another cgroup (or hidden by the unit's
 * ProtectProc as another user's). A holder without an owner record, on another host, and
 * anything going wrong here (the SQLite addon itself may be what broke) mean "none": driving
 * safe is never skipped on a doubt.
 */
async function runningDaemon(
  dbPath: string,
  cgroupOf: (pid: number | 'self') => string | undefined,
): Promise<string | undefined> {
  try {
    const { probeLock } = await import('../store/daemon-lock.js');
    const probe = probeLock(dbPath);
    const owner = probe.held ? probe.owner : undefined;
    if (!owner || owner.host !== hostname() || owner.pid === process.pid) return undefined;
    const ours = cgroupOf('self');
    if (ours === undefined || cgroupOf(owner.pid) === ours) return undefined;
    return `another homeostat pid ${owner.pid} on ${owner.host} (node id ${owner.nodeId}, since ${owner.startedAt}) is running on ${dbPath}`;
  } catch {
    return undefined;
  }
}

/** `/proc/<pid>/cgroup`, or undefined when it cannot be read (gone, or hidden by ProtectProc). */
function procCgroup(pid: number | 'self'): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The MQTT actuators' safe commands, if the broker answers in time; one line each. */
async function mqttBestEffort(targets: SafeTargets, timeoutMs: number): Promise<string[]> {
  if (targets.plugs.length === 0) return [];
  // Loaded only here: a GPIO-only config never loads the MQTT client.
  const { publishSafeCommands } = await import('./safe-mqtt.js');
  const results =
    timeoutMs > 0
      ? await publishSafeCommands(targets.broker, targets.plugs, { timeoutMs })
      : new Map(targets.plugs.map((p) => [p.id, { sent: false as const, reason: 'MQTT not tried' }]));
  return targets.plugs.map((plug: SafePlug) => {
    const result = results.get(plug.id);
    const what = result?.sent
      ? `${plug.payload} sent on ${plug.topic} (acknowledged)`
      : `not reached (${result && !result.sent ? result.reason : 'no command'})`;
    return `${plug.id} (${plug.kind}): ${what}; ${plug.deadMan}`;
  });
}

/** `heater (gpio_relay BCM 17 = sysfs 529, active-low): ON → OFF, pin now high (released)`. */
export function describeOutcome(relay: SafeRelay, outcome: SafeOutcome): string {
  const where = `BCM ${relay.bcm}${outcome.sysfsNumber === undefined ? '' : ` = sysfs ${outcome.sysfsNumber}`}`;
  const head = `${relay.id} (gpio_relay ${where}${relay.activeLow ? ', active-low' : ''})`;
  if (!outcome.ok) return `${head}: FAILED, not driven safe: ${outcome.error}`;
  const state = (raw: 0 | 1) => {
    const logical = rawOf(raw, relay.activeLow);
    return `${logical === 1 ? 'ON' : 'OFF'} (pin ${raw === 1 ? 'high' : 'low'})`;
  };
  switch (outcome.action) {
    case 'untouched':
      return `${head}: already ${state(outcome.rawAfter)}, its safe state; not written`;
    case 'written':
      return `${head}: was ${state(outcome.rawBefore ?? ((1 - outcome.rawAfter) as 0 | 1))}, now ${state(outcome.rawAfter)}`;
    case 'exported':
      return `${head}: was not an output; now an output at ${state(outcome.rawAfter)}`;
  }
}
