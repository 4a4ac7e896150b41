/**
 * `homeostat doctor`: checks what the daemon needs from the machine (a valid config, GPIO pins,
 * each hardware kind's own check such as the 1-Wire bus or a file_value's file, the broker, a
 * writable database, systemd's notify socket) and says how to fix each problem. Every check is
 * a function returning {@link CheckResult}s, so tests run them on fixture trees; none of them
 * writes anything a running daemon uses.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import mqtt from 'mqtt';
import { loadConfigFile } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { exportedDirection, listGpioChips, resolveGpio } from '../drivers/gpio/chip.js';
import { gpioPinOf, KIND_DOCTORS } from '../kinds/registry.js';
import type { CheckResult } from '../kinds/types.js';
import { redactUrl } from '../redact.js';
import { createNotifier, type NotifierOptions, notifySocketAddress } from '../systemd/notify.js';
import { mqttSettings } from './mqtt-setup.js';

export type { CheckResult, CheckStatus } from '../kinds/types.js';

/** Whether this user may write `path` (`fs.access(W_OK)`); injectable because tests run as root. */
export type CanWrite = (path: string) => Promise<boolean>;

const canWriteFs: CanWrite = (path) =>
  access(path, constants.W_OK).then(
    () => true,
    () => false,
  );

/** How long the broker check waits for a CONNACK, ms. */
export const BROKER_TIMEOUT_MS = 5_000;

/** Every section with a GPIO pin (its kind says which field), with its path in the file. */
function pinsOf(config: Config): { path: string; bcm: number }[] {
  const pins: { path: string; bcm: number }[] = [];
  for (const section of ['sensors', 'actuators'] as const) {
    for (const [id, item] of Object.entries(config[section])) {
      const bcm = gpioPinOf(item);
      if (bcm !== undefined) pins.push({ path: `${section}.${id}`, bcm });
    }
  }
  return pins;
}

// ---------------------------------------------------------------------------------------
// 1. Config

/** Loads and validates the config file; `config` is set when it is valid. */
export function checkConfig(configPath: string): { result: CheckResult; config?: Config } {
  const loaded = loadConfigFile(configPath);
  if (!loaded.ok) {
    return {
      result: {
        name: 'config',
        status: 'fail',
        detail: `${configPath} is not valid:\n${loaded.errors.join('\n')}`,
        fix: `correct the lines above (homeostat validate --config ${configPath} lists them again)`,
      },
    };
  }
  const loops = Object.keys(loaded.config.loops).length;
  // Deprecated keys still work: listed under the ok line, never a failure.
  const detail = [`${configPath} is valid (${loops} loop(s))`, ...loaded.warnings].join('\n');
  return { result: { name: 'config', status: 'ok', detail }, config: loaded.config };
}

// ---------------------------------------------------------------------------------------
// 2. GPIO

const GPIO_GROUP_FIX =
  'add the service user to the gpio group, which owns /sys/class/gpio on Raspberry Pi OS: ' +
  'sudo usermod -aG gpio homeostat, then restart homeostat';

/**
 * The GPIO chips under `<sysfsRoot>/class/gpio`, then per configured pin: the chip and sysfs
 * number it resolves to, and whether it can be exported (`export` writable by this user) or
 * already is. One skipped result when no sensor or actuator has a `bcm` pin.
 */
export async function checkGpio(config: Config, deps: { canWrite?: CanWrite } = {}): Promise<CheckResult[]> {
  const pins = pinsOf(config);
  if (pins.length === 0) return [{ name: 'GPIO', status: 'skip', detail: 'no GPIO pins in this config' }];
  const block = config.gpio;
  const root = block.sysfsRoot;
  const gpioDir = join(root, 'class/gpio');
  const results: CheckResult[] = [];

  const chips = await listGpioChips(root).catch(() => []);
  if (chips.length === 0 && block.base === undefined) {
    return [
      {
        name: 'GPIO chips',
        status: 'fail',
        detail: `no GPIO chips under ${gpioDir}`,
        fix:
          'homeostat drives pins through sysfs GPIO (/sys/class/gpio), which this kernel does not offer: ' +
          'run it on a Raspberry Pi with a Raspberry Pi OS kernel (built with CONFIG_GPIO_SYSFS), or set ' +
          'gpio.sysfsRoot if sysfs is mounted elsewhere',
      },
    ];
  }
  results.push({
    name: 'GPIO chips',
    status: 'ok',
    detail:
      chips.length === 0
        ? `none listed; gpio.base ${block.base} is used as configured`
        : chips.map((c) => `${c.name} "${c.label}" base ${c.base} (${c.ngpio} lines)`).join(', '),
  });

  const canWrite = deps.canWrite ?? canWriteFs;
  const exportWritable = await canWrite(join(gpioDir, 'export'));
  for (const { path, bcm } of pins) {
    const name = `GPIO${bcm} (${path})`;
    let resolved: Awaited<ReturnType<typeof resolveGpio>>;
    try {
      resolved = await resolveGpio(bcm, {
        sysfsRoot: root,
        override: { base: block.base, chipLabel: block.chipLabel },
      });
    } catch (error) {
      results.push({
        name,
        status: 'fail',
        detail: messageOf(error),
        fix: "set gpio.chipLabel to the label of the Pi's main GPIO chip (listed above), or gpio.base to its base",
      });
      continue;
    }
    const where = `sysfs ${resolved.sysfsNumber} on ${resolved.chip} (base ${resolved.base})`;
    const direction = await exportedDirection(root, resolved.sysfsNumber).catch(() => undefined);
    if (direction !== undefined) {
      results.push({ name, status: 'ok', detail: `${where}, already exported (${direction})` });
    } else if (exportWritable) {
      results.push({ name, status: 'ok', detail: `${where}, exportable` });
    } else {
      results.push({
        name,
        status: 'fail',
        detail: `${where}: ${join(gpioDir, 'export')} is not writable by this user`,
        fix: GPIO_GROUP_FIX,
      });
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------
// 3. The kinds' own checks (1-Wire for ds18b20, the file of a file_value…)

/** What a kind's check may use; the clock is injectable for the DS18B20's rate limit. */
export interface KindCheckDeps {
  nowMs?: () => number;
}

/** Runs one kind's doctor check on the sections of that kind; its `whenAbsent` when there are none. */
async function runKindCheck(
  { kind, doctor }: (typeof KIND_DOCTORS)[number],
  config: Config,
  deps: KindCheckDeps,
): Promise<CheckResult[]> {
  const items = [...Object.entries(config.sensors), ...Object.entries(config.actuators)]
    .filter(([, section]) => section.kind === kind)
    .map(([id, section]) => ({ id, section }));
  if (items.length === 0) return doctor.whenAbsent ? [doctor.whenAbsent] : [];
  return doctor.check(items, { sysfsRoot: config.gpio.sysfsRoot, nowMs: deps.nowMs ?? Date.now });
}

/** Every kind's check that applies to this config, in registry order. */
export async function checkKinds(config: Config, deps: KindCheckDeps = {}): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const kind of KIND_DOCTORS) results.push(...(await runKindCheck(kind, config, deps)));
  return results;
}

/**
 * The 1-Wire bus (`<sysfsRoot>/bus/w1/devices`) and one fresh reading of each configured DS18B20
 * (by address, or the only one present). Skipped without ds18b20 sensors. The ds18b20 kind's
 * check (kinds/sensors/ds18b20-doctor.ts); part of {@link checkKinds}.
 */
export async function checkOneWire(config: Config, deps: KindCheckDeps = {}): Promise<CheckResult[]> {
  const oneWire = KIND_DOCTORS.find(({ kind }) => kind === 'ds18b20');
  return oneWire ? runKindCheck(oneWire, config, deps) : [];
}

// ---------------------------------------------------------------------------------------
// 4. Broker

/**
 * Connects once to the configured broker with its credentials, as a separate client (the
 * daemon's client id + `-doctor`: reusing the daemon's id would take over its session).
 * Skipped without an mqtt block. The password is never printed, nor a password in the URL.
 */
export async function checkBroker(
  config: Config,
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CheckResult> {
  const name = 'MQTT broker';
  if (!config.mqtt) return { name, status: 'skip', detail: 'no mqtt block in this config' };
  let settings: ReturnType<typeof mqttSettings>;
  try {
    settings = mqttSettings(config, undefined, opts.env ?? process.env);
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: messageOf(error),
      fix: 'make the file readable by the user running homeostat, or correct its path in the mqtt block',
    };
  }
  if (!settings) return { name, status: 'skip', detail: 'no broker URL configured' };
  const url = redactUrl(settings.url);
  const who = settings.username ? ` as ${settings.username}` : ' anonymously';
  const timeoutMs = opts.timeoutMs ?? BROKER_TIMEOUT_MS;
  const error = await tryConnect(settings, timeoutMs);
  if (!error) return { name, status: 'ok', detail: `connected to ${url}${who}` };
  return {
    name,
    status: 'fail',
    detail: `${url}${who}: ${messageOf(error)}`,
    fix: brokerFix(error, timeoutMs),
  };
}

/** The fix for a failed broker connection, from the error MQTT.js reported. */
export function brokerFix(error: unknown, timeoutMs: number = BROKER_TIMEOUT_MS): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = messageOf(error);
  if (code === 'ECONNREFUSED') {
    return 'nothing listens there: is mosquitto running (systemctl status mosquitto), and are host and port in mqtt.url right?';
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return 'the host name in mqtt.url does not resolve: correct it';
  if (/Not authorized|Bad user ?name or password/i.test(message)) {
    return "the broker refused the credentials: check mqtt.username and the password in mqtt.passwordFile (or HOMEOSTAT_MQTT_PASSWORD), and the broker's ACL";
  }
  if (
    (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO|TLS|SSL/.test(code)) ||
    /certificate|TLS|SSL/i.test(message)
  ) {
    return 'the TLS handshake failed: set mqtt.tls.caFile to the CA that signed the broker certificate, and use the host name the certificate names';
  }
  if (/timed out|timeout/i.test(message)) {
    return `no answer within ${timeoutMs / 1000} s: check mqtt.url (mqtt:// vs mqtts://, port) and firewalls`;
  }
  return 'check mqtt.url and the broker log (journalctl -u mosquitto)';
}

/** Resolves undefined once connected, or the error (timeout included); always closes the client. */
function tryConnect(settings: NonNullable<ReturnType<typeof mqttSettings>>, timeoutMs: number) {
  return new Promise<Error | undefined>((resolve) => {
    const client = mqtt.connect(settings.url, {
      clientId: `${settings.clientId}-doctor`,
      protocolVersion: settings.protocolVersion,
      clean: true,
      connectTimeout: timeoutMs,
      // One attempt: the verdict is about this attempt, not eventual success.
      reconnectPeriod: 0,
      ...(settings.username === undefined ? {} : { username: settings.username }),
      ...(settings.password === undefined ? {} : { password: settings.password }),
      ...(settings.ca === undefined ? {} : { ca: settings.ca }),
      ...(settings.cert === undefined ? {} : { cert: settings.cert }),
      ...(settings.key === undefined ? {} : { key: settings.key }),
    });
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end(true);
      resolve(error);
    };
    const timer = setTimeout(
      () => settle(new Error(`timed out after ${timeoutMs / 1000} s without a CONNACK`)),
      timeoutMs,
    );
    client.on('connect', () => settle(undefined));
    client.on('error', (error) => settle(error));
    client.on('close', () => settle(new Error('connection closed before the broker accepted it')));
  });
}

// ---------------------------------------------------------------------------------------
// 5. Database

/**
 * The database's directory is writable (or, if it does not exist yet, the nearest existing
 * ancestor, since the daemon creates it), and an existing file opens and passes
 * `PRAGMA quick_check`. Nothing is written, migrated or moved aside, so a running daemon is
 * not disturbed.
 */
export async function checkDatabase(
  dbPath: string,
  deps: { canWrite?: CanWrite } = {},
): Promise<CheckResult> {
  const name = 'database';
  const canWrite = deps.canWrite ?? canWriteFs;
  const dir = await nearestExisting(dirname(dbPath));
  const permissionFix =
    `make ${dirname(dbPath)} and ${dbPath} writable by the user running homeostat ` +
    '(with systemd: StateDirectory=homeostat), or choose another path with --db';
  if (!(await canWrite(dir))) {
    return { name, status: 'fail', detail: `${dir} is not writable by this user`, fix: permissionFix };
  }
  const exists = await stat(dbPath).then(
    () => true,
    () => false,
  );
  if (!exists) return { name, status: 'ok', detail: `${dbPath} does not exist yet; ${dir} is writable` };
  if (!(await canWrite(dbPath))) {
    return { name, status: 'fail', detail: `${dbPath} is not writable by this user`, fix: permissionFix };
  }
  let db: Database.Database | undefined;
  try {
    // With the daemon running (its -wal exists), read-only: WAL lets a reader in beside it.
    // Without, a read-only connection would leave a -wal and -shm behind (it may not
    // checkpoint), owned by whoever ran doctor, maybe root, which the daemon then cannot
    // open; a read-write connection that writes nothing removes them when it closes.
    const daemonFiles = await stat(`${dbPath}-wal`).then(
      () => true,
      () => false,
    );
    db = new Database(dbPath, { readonly: daemonFiles, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
    const problems = rows.map((row) => row.quick_check).filter((line) => line !== 'ok');
    if (problems.length > 0) {
      return {
        name,
        status: 'fail',
        detail: `${dbPath}: quick_check: ${problems.slice(0, 3).join('; ')}`,
        fix: CORRUPT_FIX,
      };
    }
    return { name, status: 'ok', detail: `${dbPath} opens, quick_check ok` };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const corrupt = typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
    return {
      name,
      status: 'fail',
      detail: `${dbPath}: ${messageOf(error)}`,
      fix: corrupt ? CORRUPT_FIX : permissionFix,
    };
  } finally {
    db?.close();
  }
}

const CORRUPT_FIX =
  'the file is damaged: restart homeostat, which moves it aside and starts a fresh one from the config ' +
  '(runtime setpoints and history are lost), or restore a backup';

async function nearestExisting(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    const exists = await stat(current).then(
      () => true,
      () => false,
    );
    const parent = dirname(current);
    if (exists || parent === current) return current;
    current = parent;
  }
}

// ---------------------------------------------------------------------------------------
// 6. systemd

/**
 * The notify socket in `$NOTIFY_SOCKET`, when set: its address is valid and it accepts a
 * datagram. Only the notifier's `STATUS=` probe is sent, never `READY=1`; `WATCHDOG_USEC` is
 * left out so an unusable socket is reported rather than thrown.
 */
export function checkNotify(
  env: NodeJS.ProcessEnv = process.env,
  opts: Pick<NotifierOptions, 'socketFactory'> = {},
): CheckResult {
  const name = 'systemd notify';
  const socket = env.NOTIFY_SOCKET;
  if (socket === undefined || socket === '') {
    return { name, status: 'skip', detail: 'not running under systemd (NOTIFY_SOCKET unset)' };
  }
  const fix =
    'the unit needs Type=notify with NotifyAccess=main and the unix-dgram addon built for this Node ' +
    '(npm rebuild unix-dgram)';
  try {
    notifySocketAddress(socket);
  } catch (error) {
    return { name, status: 'fail', detail: messageOf(error), fix };
  }
  const notifier = createNotifier({ NOTIFY_SOCKET: socket }, opts);
  try {
    if (!notifier.enabled) {
      return { name, status: 'fail', detail: notifier.problem ?? `${socket} cannot be used`, fix };
    }
    return { name, status: 'ok', detail: `${socket} accepts datagrams` };
  } finally {
    notifier.close();
  }
}

// ---------------------------------------------------------------------------------------
// The command

/** One line per check (`✓`, `✗`, `–`), a `  fix:` line after each failure. */
export function formatCheck(result: CheckResult): string[] {
  const mark = result.status === 'ok' ? '✓' : result.status === 'fail' ? '✗' : '–';
  const [first = '', ...more] = result.detail.split('\n');
  const lines = [`${mark} ${result.name}: ${first}`, ...more.map((line) => `    ${line}`)];
  if (result.status === 'fail' && result.fix) lines.push(`  fix: ${result.fix}`);
  return lines;
}

/** Runs every check and prints them; 0 when none failed, 1 otherwise. */
export async function doctorCommand(
  opts: { configPath: string; dbPath: string; env?: NodeJS.ProcessEnv; brokerTimeoutMs?: number },
  write: (line: string) => void,
): Promise<number> {
  const env = opts.env ?? process.env;
  const results: CheckResult[] = [];
  const report = (checks: CheckResult[]) => {
    for (const check of checks) {
      results.push(check);
      for (const line of formatCheck(check)) write(line);
    }
  };
  const { result, config } = checkConfig(opts.configPath);
  report([result]);
  if (config) {
    report(await checkGpio(config));
    report(await checkKinds(config));
    report([
      await checkBroker(config, {
        env,
        ...(opts.brokerTimeoutMs ? { timeoutMs: opts.brokerTimeoutMs } : {}),
      }),
    ]);
  } else {
    report([{ name: 'GPIO, 1-Wire, MQTT broker', status: 'skip', detail: 'need a valid config' }]);
  }
  report([await checkDatabase(opts.dbPath)]);
  report([checkNotify(env)]);
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
