/**
 * `homeostat init`: writes a commented starter config from the hardware found. It lists the
 * DS18B20 probes (address and reading) and the GPIO chips, then asks (or takes flags) which
 * probe and which relay pin regulate a room, with a setpoint; without hardware it writes a
 * simulated room. The text is validated before it is written, and an existing file is never
 * overwritten. The pieces live in src/init/.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseConfigText } from '../config/load.js';
import { DEFAULT_SYSFS_ROOT } from '../config/schema.js';
import { type Choice, chooseStarter } from '../init/choose.js';
import { isServiceConfigPath, nodeIdFromHostname, SERVICE_DB_PATH, type StarterPlan } from '../init/plan.js';
import { type Ask, NoAnswer, terminalAsk } from '../init/prompt.js';
import { formatScan, formatWritten } from '../init/report.js';
import { type HardwareScan, scanHardware } from '../init/scan.js';
import { renderStarter } from '../init/starter.js';
import { cannotCreate, pathTaken, writeNewFile } from '../init/write-file.js';
import { messageOf } from '../kinds/types.js';

const WRITE_FIX = 'run it with sudo for /etc/homeostat, or give a path you can write: homeostat init FILE';

/** The options `homeostat init` passes (src/cli.ts). */
export interface InitOptions {
  outPath: string;
  sysfsRoot: string;
  /** A DS18B20 address, or `sim`. */
  sensor?: string;
  relayPin?: string;
  setpoint?: string;
  loop?: string;
  /** Ask the questions (a terminal and no --yes). */
  interactive: boolean;
}

/** What tests replace: the questions' answers, the host name, the clock of the probe reads. */
export interface InitDeps {
  /** Default: the terminal (node:readline/promises on stdin/stdout), when interactive. */
  ask?: Ask;
  hostname?: () => string;
  nowMs?: () => number;
}

/**
 * Exit 0 when the file was written; 1 when it exists, cannot be written, or the questions got
 * no answer; 2 when a flag is missing or wrong (the missing --relay-pin among them). Nothing is
 * written unless the exit is 0.
 */
export async function initCommand(
  opts: InitOptions,
  write: (line: string) => void,
  deps: InitDeps = {},
): Promise<number> {
  const outPath = resolve(opts.outPath);
  // Before the questions: nobody should answer them for a file that cannot be written.
  const notWritable = await whyNotWritable(outPath);
  if (notWritable !== undefined) {
    write(notWritable);
    return 1;
  }

  const sysfsRoot = resolve(opts.sysfsRoot);
  const scan = await scanHardware(sysfsRoot, deps.nowMs ? { nowMs: deps.nowMs } : {});
  for (const line of formatScan(scan)) write(line);

  const choice = await chooseOrCancel(opts, scan, sysfsRoot, write, deps);
  if (choice === undefined) return 1;
  if ('error' in choice) {
    write(choice.error.startsWith('init:') ? choice.error : `init: ${choice.error}`);
    return choice.usage ? 2 : 1;
  }

  const plan =
    choice.plan.kind === 'sim' && isServiceConfigPath(outPath, process.env.CONFIGURATION_DIRECTORY)
      ? { ...choice.plan, storagePath: SERVICE_DB_PATH }
      : choice.plan;
  const text = validStarter(plan, outPath, write);
  if (text === undefined || !(await writeStarter(outPath, text, write))) return 1;
  for (const note of choice.notes) write(`note: ${note}`);
  for (const line of formatWritten(outPath, plan)) write(line);
  return 0;
}

/** init never overwrites a config: the line that says so (before the questions, or at the write). */
function existsRefusal(outPath: string): string {
  return (
    `init: ${outPath} exists; nothing written (init never overwrites a config): ` +
    'give another path, homeostat init FILE (or --out FILE)'
  );
}

/** Why `outPath` cannot be written (it exists, or its directory refuses), or undefined. */
async function whyNotWritable(outPath: string): Promise<string | undefined> {
  if (await pathTaken(outPath)) return existsRefusal(outPath);
  const unwritable = await cannotCreate(outPath);
  if (unwritable === undefined) return undefined;
  return `init: cannot write ${outPath}: ${unwritable}; nothing written: ${WRITE_FIX}`;
}

/**
 * The starter from the flags and (interactive) the answers; undefined, the reason written, when
 * a question got no answer or refused its last one. The terminal is closed either way.
 */
async function chooseOrCancel(
  opts: InitOptions,
  scan: HardwareScan,
  sysfsRoot: string,
  write: (line: string) => void,
  deps: InitDeps,
): Promise<Choice | undefined> {
  const terminal = opts.interactive && !deps.ask ? terminalAsk() : undefined;
  const ask = opts.interactive ? (deps.ask ?? terminal?.ask) : undefined;
  try {
    return await chooseStarter(
      scan,
      { sensor: opts.sensor, relayPin: opts.relayPin, setpoint: opts.setpoint, loop: opts.loop },
      {
        nodeId: nodeIdFromHostname((deps.hostname ?? hostname)()),
        configSysfsRoot: sysfsRoot === DEFAULT_SYSFS_ROOT ? undefined : sysfsRoot,
        ask,
        write,
      },
    );
  } catch (error) {
    write(
      error instanceof NoAnswer
        ? 'init: cancelled (no answer); nothing written'
        : `init: ${messageOf(error)}; nothing written`,
    );
    return undefined;
  } finally {
    terminal?.close();
  }
}

/** The starter's text, validated: one that does not validate is a bug here, never a file for the person to debug. */
function validStarter(plan: StarterPlan, outPath: string, write: (line: string) => void): string | undefined {
  const text = renderStarter(plan);
  const checked = parseConfigText(text, outPath);
  if (checked.ok) return text;
  write(`init: the config generated does not validate (a bug in homeostat init); nothing written:`);
  for (const error of checked.errors) write(`  ${error}`);
  return undefined;
}

/** Writes the new file; false (the reason written) when it appeared meanwhile or cannot be written. */
async function writeStarter(outPath: string, text: string, write: (line: string) => void): Promise<boolean> {
  try {
    await writeNewFile(outPath, text);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') write(existsRefusal(outPath));
    else write(`init: cannot write ${outPath}: ${messageOf(error)}; nothing written: ${WRITE_FIX}`);
    return false;
  }
}
