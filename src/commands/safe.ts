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
 * Per relay, the pin ends as an output at the raw level that means "safe" (released, for
 * `safeState: off`, whatever the board's active-low wiring):
 * - exported output already at that level: left untouched (no write, no glitch);
 * - exported output at the other level: `value` written once (one clean transition);
 * - exported input, or not exported: exported, then `direction` written as `high`/`low`,
 *   which sets the raw level atomically (the kernel ignores `active_low` there, so `out`
 *   would briefly energise an active-low relay), then `active_low` as configured so the next
 *   daemon adopts the pin as its own.
 *
 * MQTT actuators come second and are best effort (safe-mqtt.ts): their safe command is sent
 * only if the broker answers within 2 s. What protects a plug without a broker is its own
 * dead man's switch (`deadManS`: Tasmota PulseTime, Zigbee2MQTT on_time); the report says
 * which plugs have one.
 */
import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfigFile, readConfigText } from '../config/load.js';
import { type Config, DEFAULT_SYSFS_ROOT } from '../config/schema.js';
import { type GpioChipOverride, resolveGpio } from '../drivers/gpio/chip.js';
import { readSysfsText } from '../drivers/gpio/sysfs-read.js';

/** A GPIO relay as `safe` needs it: where it is, how it is wired, which logical level is safe. */
export interface SafeRelay {
  id: string;
  bcm: number;
  activeLow: boolean;
  /** Logical level to end at: 0 = released (`safeState: off`), 1 = energised (`safeState: on`). */
  safeLevel: 0 | 1;
}

/**
 * The few sysfs operations `safe` uses. The default works on real files; tests wrap it to
 * record writes, simulate the kernel's `export`, or make a pin fail or hang.
 */
export interface SysfsIo {
  /** The first bytes of a file, trimmed (sysfs attributes are a few bytes). */
  read(path: string): Promise<string>;
  write(path: string, text: string): Promise<void>;
  /** The file exists and this process may write it (udev fixes permissions after an export). */
  writable(path: string): Promise<boolean>;
}

/** Bytes read from one sysfs attribute: `out`, `0`, `1`; a hostile file cannot make it grow. */
const MAX_ATTRIBUTE_BYTES = 64;

export const fileSysfsIo: SysfsIo = {
  read: async (path) => (await readSysfsText(path, MAX_ATTRIBUTE_BYTES)).trim(),
  write: (path, text) => writeFile(path, text),
  writable: (path) =>
    access(path, constants.W_OK).then(
      () => true,
      () => false,
    ),
};

/** Options of {@link driveRelaySafe} and {@link driveAllSafe}. */
export interface SafeGpioOptions {
  /** Where sysfs is mounted: `/sys` on the Pi, a fixture directory in tests. */
  sysfsRoot: string;
  chip?: GpioChipOverride | undefined;
  io?: SysfsIo | undefined;
  /** Longest time one pin may take, ms. Default 2000 (a healthy pin takes a few ms). */
  pinTimeoutMs?: number | undefined;
  /** Longest wait for the kernel and udev to make a just-exported pin writable, ms. Default 1000. */
  exportWaitMs?: number | undefined;
}

/** What happened to one relay. Levels are raw pin levels (what the relay board sees). */
export type SafeOutcome =
  | {
      id: string;
      ok: true;
      /** `untouched`: already safe; `written`: value changed; `exported`: made an output at the safe level. */
      action: 'untouched' | 'written' | 'exported';
      sysfsNumber: number;
      /** Raw level before, when the pin was an output. */
      rawBefore?: 0 | 1;
      rawAfter: 0 | 1;
    }
  | { id: string; ok: false; sysfsNumber?: number; error: string };

const DEFAULT_PIN_TIMEOUT_MS = 2_000;
const DEFAULT_EXPORT_WAIT_MS = 1_000;
const EXPORT_POLL_MS = 10;

/** The raw pin level that means logical `level` on a board wired active-low or not. */
function rawOf(level: 0 | 1, activeLow: boolean): 0 | 1 {
  return (activeLow ? 1 - level : level) as 0 | 1;
}

function bit(text: string, what: string): 0 | 1 {
  if (text === '0' || text === '1') return Number(text) as 0 | 1;
  throw new Error(`${what} reads ${JSON.stringify(text.slice(0, 20))}, expected 0 or 1`);
}

/** Drives one relay to its safe level (see the module comment); never rejects. */
export async function driveRelaySafe(relay: SafeRelay, opts: SafeGpioOptions): Promise<SafeOutcome> {
  const io = opts.io ?? fileSysfsIo;
  const timeoutMs = opts.pinTimeoutMs ?? DEFAULT_PIN_TIMEOUT_MS;
  let sysfsNumber: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from sysfs within ${timeoutMs} ms (a hung GPIO driver?)`)),
      timeoutMs,
    );
  });
  const work = (async (): Promise<SafeOutcome> => {
    const resolved = await resolveGpio(relay.bcm, { sysfsRoot: opts.sysfsRoot, override: opts.chip });
    sysfsNumber = resolved.sysfsNumber;
    const dir = join(opts.sysfsRoot, 'class/gpio', `gpio${sysfsNumber}`);
    const target = rawOf(relay.safeLevel, relay.activeLow);
    const direction = await readOptional(io, join(dir, 'direction'));
    if (direction !== undefined && direction !== 'in') {
      // An output (the kernel reads back `out`): `value` is logical under the pin's own active_low.
      const pinActiveLow = bit(await io.read(join(dir, 'active_low')), 'active_low') === 1;
      const rawBefore = rawOf(bit(await io.read(join(dir, 'value')), 'value'), pinActiveLow);
      if (rawBefore === target) {
        return { id: relay.id, ok: true, action: 'untouched', sysfsNumber, rawBefore, rawAfter: target };
      }
      await io.write(join(dir, 'value'), String(rawOf(target, pinActiveLow)));
      const rawAfter = await readRaw(io, dir);
      if (rawAfter !== target) throw new Error(`wrote the safe level but the pin reads back ${rawAfter}`);
      return { id: relay.id, ok: true, action: 'written', sysfsNumber, rawBefore, rawAfter };
    }
    if (direction === undefined) {
      await io.write(join(opts.sysfsRoot, 'class/gpio/export'), String(sysfsNumber));
      await waitWritable(io, join(dir, 'direction'), opts.exportWaitMs ?? DEFAULT_EXPORT_WAIT_MS);
    }
    // `high`/`low` set the raw level with the direction, in one step.
    await io.write(join(dir, 'direction'), target === 1 ? 'high' : 'low');
    await io.write(join(dir, 'active_low'), relay.activeLow ? '1' : '0');
    // The same level again, logically: a no-op on a kernel, where `high`/`low` set `value` already.
    await io.write(join(dir, 'value'), String(relay.safeLevel));
    const rawAfter = await readRaw(io, dir);
    if (rawAfter !== target) throw new Error(`exported at the safe level but the pin reads back ${rawAfter}`);
    return { id: relay.id, ok: true, action: 'exported', sysfsNumber, rawAfter };
  })();
  // Past its deadline the pin is reported failed; a late error of its work must not crash the command.
  work.catch(() => {});
  try {
    return await Promise.race([work, deadline]);
  } catch (error) {
    return {
      id: relay.id,
      ok: false,
      ...(sysfsNumber === undefined ? {} : { sysfsNumber }),
      error: gpioErrorMessage(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Every relay at once (a hung pin must not hold the others back), in the order given. */
export function driveAllSafe(relays: readonly SafeRelay[], opts: SafeGpioOptions): Promise<SafeOutcome[]> {
  return Promise.all(relays.map((relay) => driveRelaySafe(relay, opts)));
}

async function readRaw(io: SysfsIo, dir: string): Promise<0 | 1> {
  const activeLow = bit(await io.read(join(dir, 'active_low')), 'active_low') === 1;
  return rawOf(bit(await io.read(join(dir, 'value')), 'value'), activeLow);
}

async function readOptional(io: SysfsIo, path: string): Promise<string | undefined> {
  try {
    return await io.read(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** After `export`, the kernel creates the pin's files and udev then hands them to group gpio. */
async function waitWritable(io: SysfsIo, path: string, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  while (!(await io.writable(path))) {
    if (Date.now() >= until) {
      throw new Error(`exported, but ${path} is not writable after ${waitMs} ms (udev rule for group gpio?)`);
    }
    await new Promise((resolve) => setTimeout(resolve, EXPORT_POLL_MS));
  }
}

/** A sysfs error as a line a person can act on. */
function gpioErrorMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${message}): the homeostat user must be in group gpio`;
    case 'EBUSY':
      return `busy (${message}): the pin is claimed by a kernel driver (a dtoverlay) or another program`;
    default:
      return message;
  }
}

// ---------------------------------------------------------------------------------------
// The config: what to drive

/** The relays and actuators `safe` acts on, and where GPIO lives, from a config. */
export interface SafePlan {
  relays: SafeRelay[];
  sysfsRoot: string;
  chip: GpioChipOverride;
  /** MQTT actuators, for the report: id and dead man's switch in seconds (0: none). */
  mqtt: { id: string; kind: string; deadMan: string }[];
}

/** From a valid config. */
export function planFromConfig(config: Config): SafePlan {
  const relays: SafeRelay[] = [];
  const mqtt: SafePlan['mqtt'] = [];
  for (const [id, actuator] of Object.entries(config.actuators)) {
    if (actuator.kind === 'gpio_relay') {
      relays.push({
        id,
        bcm: actuator.bcm,
        activeLow: actuator.activeLow,
        safeLevel: actuator.safeState === 'on' ? 1 : 0,
      });
    } else if (actuator.kind === 'mqtt_switch' || actuator.kind === 'mqtt_level') {
      mqtt.push({ id, kind: actuator.kind, deadMan: deadManText(actuator) });
    }
  }
  return {
    relays,
    sysfsRoot: config.gpio.sysfsRoot,
    chip: { chipLabel: config.gpio.chipLabel, base: config.gpio.base },
    mqtt,
  };
}

function deadManText(actuator: Config['actuators'][string]): string {
  const none = 'no dead man’s switch: if it was not reached, it stays as it is until homeostat is back';
  if (actuator.kind !== 'mqtt_switch') return none;
  if (actuator.deadManS <= 0) return `${none} (deadManS 0)`;
  const how = actuator.preset === 'tasmota' ? 'Tasmota PulseTime' : 'Zigbee2MQTT on_time';
  return `turns itself off ≤ ${actuator.deadManS} s after its last ON (${how})`;
}

/**
 * From a config that does not validate (edited while the daemon ran: the daemon kept the old
 * one). The GPIO relays it names are still the best guess of what is wired: every
 * `actuators.<id>` of kind `gpio_relay` with an integer `bcm`, defaults as in the schema
 * (activeLow true, safeState off). Undefined when not even that can be read.
 */
export function planFromBrokenText(text: string): SafePlan | undefined {
  let data: unknown;
  try {
    data = parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  const gpio = isRecord(data.gpio) ? data.gpio : {};
  const actuators = isRecord(data.actuators) ? data.actuators : {};
  const relays: SafeRelay[] = [];
  for (const [id, section] of Object.entries(actuators)) {
    if (!isRecord(section) || section.kind !== 'gpio_relay') continue;
    if (!Number.isInteger(section.bcm) || (section.bcm as number) < 0) continue;
    relays.push({
      id,
      bcm: section.bcm as number,
      activeLow: section.activeLow !== false,
      safeLevel: section.safeState === 'on' ? 1 : 0,
    });
  }
  return {
    relays,
    sysfsRoot:
      typeof gpio.sysfsRoot === 'string' && gpio.sysfsRoot !== '' ? gpio.sysfsRoot : DEFAULT_SYSFS_ROOT,
    chip: {
      chipLabel: typeof gpio.chipLabel === 'string' ? gpio.chipLabel : undefined,
      base: Number.isInteger(gpio.base) ? (gpio.base as number) : undefined,
    },
    mqtt: [],
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// The command

export interface SafeCommandOptions {
  configPath: string;
  /** Overrides the config's `gpio.sysfsRoot` (tests; a Pi always uses /sys). */
  sysfsRoot?: string | undefined;
  io?: SysfsIo | undefined;
  pinTimeoutMs?: number | undefined;
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

/** The relays of a config that no longer validates; read with the config's own checks and cap. */
async function readBrokenPlan(path: string): Promise<SafePlan | undefined> {
  // Non-blocking and capped (a FIFO or /dev/zero as the config must not hang ExecStopPost).
  const read = readConfigText(path);
  return read.ok ? planFromBrokenText(read.text) : undefined;
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
