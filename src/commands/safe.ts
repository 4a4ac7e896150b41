/**
 * `homeostat safe`: the last line of defence when the daemon itself dies. systemd runs it from
 * `ExecStopPost=` whatever ended the process (SIGKILL, out of memory, a crash, the watchdog),
 * and it drives every configured GPIO relay to its safe level: a sysfs GPIO output keeps its
 * last level when the process holding it is gone, so a heater left ON stays ON until the
 * daemon is back (a minute or more after a watchdog kill).
 *
 * It needs nothing but the config file and sysfs: no database, no broker, no onoff (whose
 * sysfs root is fixed and whose native addon may be what broke). Every pin has a deadline, so
 * a wedged sysfs file cannot make it hang; a failure on one pin never stops the others.
 *
 * How each pin is driven without a glitch is in safe-gpio.ts, what is driven (from a valid
 * config, or from one that no longer validates) in safe-plan.ts; both are exported from here.
 *
 * MQTT actuators come second and are best effort (safe-mqtt.ts): their safe command is sent
 * only if the broker answers within 2 s. What protects a plug without a broker is its own
 * dead man's switch (`deadManS`: Tasmota PulseTime, Zigbee2MQTT on_time); the report says
 * which plugs have one.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { loadConfigFile } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { driveAllSafe, rawOf, type SafeOutcome, type SafeRelay, type SysfsIo } from './safe-gpio.js';
import { planFromConfig, readBrokenPlan, type SafePlan } from './safe-plan.js';

export {
  driveAllSafe,
  driveRelaySafe,
  fileSysfsIo,
  type SafeGpioOptions,
  type SafeOutcome,
  type SafeRelay,
  type SysfsIo,
} from './safe-gpio.js';
export { planFromBrokenText, planFromConfig, type SafePlan } from './safe-plan.js';

// ---------------------------------------------------------------------------------------
// The command

export interface SafeCommandOptions {
  configPath: string;
  /** Overrides the config's `gpio.sysfsRoot` (tests; a Pi always uses /sys). */
  sysfsRoot?: string | undefined;
  io?: SysfsIo | undefined;
  pinTimeoutMs?: number | undefined;
  /**
   * The daemon's database: when a running daemon holds its lock (this start was refused because
   * another one runs, e.g. one started by hand), its actuators are its own and are not touched.
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
}

/** How long `safe` gives the broker: long enough for a broker on the LAN, short for a stop. */
export const DEFAULT_MQTT_TIMEOUT_MS = 2_000;

/**
 * Drives every GPIO relay of the config to its safe level, then (best effort, bounded) sends
 * every MQTT actuator its safe command, and prints one line per actuator. Exit 0 when the
 * config is valid and every GPIO relay reached its safe level, 1 otherwise; MQTT never changes it.
 */
export async function safeCommand(opts: SafeCommandOptions, write: (line: string) => void): Promise<number> {
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
  const loaded = loadConfigFile(opts.configPath);
  let plan: SafePlan | undefined;
  let configOk = true;
  if (loaded.ok) {
    plan = planFromConfig(loaded.config);
  } else {
    configOk = false;
    for (const line of loaded.errors.slice(0, 5)) write(`config: ${line}`);
    plan = await readBrokenPlan(opts.configPath);
    if (!plan) {
      write(`homeostat safe: cannot read any actuator from ${opts.configPath}: no pin driven`);
      return 1;
    }
    write(
      `homeostat safe: config invalid; driving the ${plan.relays.length} gpio_relay actuator(s) it names`,
    );
  }
  const sysfsRoot = opts.sysfsRoot ?? plan.sysfsRoot;
  const outcomes = await driveAllSafe(plan.relays, {
    sysfsRoot,
    chip: plan.chip,
    io: opts.io,
    pinTimeoutMs: opts.pinTimeoutMs,
  });
  for (const [i, outcome] of outcomes.entries()) write(describeOutcome(plan.relays[i]!, outcome));
  const failed = outcomes.filter((o) => !o.ok).length;
  if (plan.relays.length === 0) {
    write('homeostat safe: no GPIO relay in the config, nothing to drive');
  } else {
    write(
      `homeostat safe: ${outcomes.length - failed} of ${outcomes.length} GPIO relay(s) at their safe level` +
        (failed > 0 ? `; ${failed} FAILED` : ''),
    );
  }
  if (loaded.ok && plan.mqtt.length > 0) {
    await mqttBestEffort(loaded.config, plan.mqtt, opts.mqttTimeoutMs ?? DEFAULT_MQTT_TIMEOUT_MS, write);
  }
  return failed === 0 && configOk ? 0 : 1;
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
async function mqttBestEffort(
  config: Config,
  actuators: SafePlan['mqtt'],
  timeoutMs: number,
  write: (line: string) => void,
): Promise<void> {
  // Loaded only here: a GPIO-only config never loads the MQTT client.
  const { mqttSafeCommands, publishSafeCommands } = await import('./safe-mqtt.js');
  const commands = mqttSafeCommands(config);
  const results =
    timeoutMs > 0
      ? await publishSafeCommands(config, commands, { timeoutMs })
      : new Map(commands.map((c) => [c.id, { sent: false as const, reason: 'MQTT not tried' }]));
  for (const actuator of actuators) {
    const command = commands.find((c) => c.id === actuator.id);
    const result = results.get(actuator.id);
    const what =
      command && result?.sent
        ? `${command.payload} sent on ${command.topic} (acknowledged)`
        : `not reached (${result && !result.sent ? result.reason : 'no command'})`;
    write(`${actuator.id} (${actuator.kind}): ${what}; ${actuator.deadMan}`);
  }
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
