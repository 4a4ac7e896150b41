/**
 * From what was found and what the user said (flags, or answers when interactive) to the plan
 * of the starter config. The rule that matters for safety: the relay pin is never guessed. A
 * pin that switches a heater might switch something else on another board, so without
 * `--relay-pin` a script gets a refusal, and a person is asked with no default.
 */
import { askSensor, describeKernelSensor, flagSensor } from './choose-sensor.js';
import { describePin, parseRelayPin, relayPinNotes } from './pins.js';
import {
  DEFAULT_LOOP,
  DEFAULT_SETPOINT_C,
  type PlannedSensor,
  parseLoop,
  parseSensorFlag,
  parseSetpoint,
  type StarterPlan,
} from './plan.js';
import { type Ask, askUntil } from './prompt.js';
import { foundHardware, type HardwareScan } from './scan.js';

/** The flags of `homeostat init`, as typed. */
export interface InitFlags {
  sensor?: string | undefined;
  relayPin?: string | undefined;
  setpoint?: string | undefined;
  loop?: string | undefined;
}

export interface ChooseOptions {
  nodeId: string;
  /** gpio.sysfsRoot to write; undefined for /sys (the default, left out of the file). */
  configSysfsRoot?: string | undefined;
  /** Ask the questions (a person at a terminal); without it, flags and defaults only. */
  ask?: Ask | undefined;
  write: (line: string) => void;
}

/** The plan and lines worth telling (which probe was taken, pins with another use…), or why not. */
export type Choice =
  | { plan: StarterPlan; notes: string[] }
  /** `usage`: a flag is missing or wrong (exit 2); otherwise exit 1. */
  | { error: string; usage: boolean };

const usageError = (error: string): Choice => ({ error, usage: true });

/** Decides the starter; throws only what `ask` throws (NoAnswer) and a question's last refusal. */
export async function chooseStarter(
  scan: HardwareScan,
  flags: InitFlags,
  opts: ChooseOptions,
): Promise<Choice> {
  const loop = parseLoop(flags.loop ?? DEFAULT_LOOP);
  if ('error' in loop) return usageError(`--loop: ${loop.error}`);
  const setpointFlag = flags.setpoint === undefined ? undefined : parseSetpoint(flags.setpoint);
  if (setpointFlag && 'error' in setpointFlag) return usageError(`--setpoint: ${setpointFlag.error}`);
  const sensorFlag = flags.sensor === undefined ? undefined : parseSensorFlag(flags.sensor);
  if (sensorFlag && 'error' in sensorFlag) return usageError(sensorFlag.error);
  const common = { nodeId: opts.nodeId, loop: loop.value };

  if (sensorFlag?.value === 'sim' || !foundHardware(scan)) {
    const setpointC = setpointFlag?.value ?? DEFAULT_SETPOINT_C;
    const why =
      sensorFlag?.value === 'sim'
        ? '--sensor sim: writing a simulated room'
        : 'no DS18B20 and no GPIO chips found (nor a kernel temperature sensor): writing a simulated room instead';
    return { plan: { kind: 'sim', ...common, setpointC }, notes: [why] };
  }

  // Flags are checked before any question, so a wrong flag costs no typing.
  const relayFlag = flags.relayPin === undefined ? undefined : parseRelayPin(flags.relayPin, true);
  if (relayFlag && 'error' in relayFlag) return usageError(`--relay-pin: ${relayFlag.error}`);
  if (!opts.ask && relayFlag === undefined) {
    return usageError(
      'init: no --relay-pin given: name the GPIO (BCM number) of the relay that switches the heater, ' +
        'e.g. --relay-pin 17; init never guesses a pin, which might switch something else. Nothing written.',
    );
  }

  const notes: string[] = [];
  const sensor = opts.ask
    ? await askSensor(scan, sensorFlag?.value, loop.value, opts.ask, opts.write)
    : flagSensor(scan, sensorFlag?.value, notes);
  if ('error' in sensor) return usageError(sensor.error);
  notes.push(...sensorNotes(scan, sensor));
  const relayBcm = opts.ask ? await askRelayPin(opts.ask, opts.write, relayFlag?.bcm) : relayFlag!.bcm;
  notes.push(...(await relayNotes(scan, relayBcm)));
  const defaultSetpointC = setpointFlag?.value ?? DEFAULT_SETPOINT_C;
  const setpointC = opts.ask
    ? await askUntil(opts.ask, opts.write, 'Setpoint, °C', defaultSetpointC.toString(), parseSetpoint)
    : defaultSetpointC;
  const plan: StarterPlan = {
    kind: 'hardware',
    ...common,
    setpointC,
    sensor,
    relayBcm,
    ...(opts.configSysfsRoot === undefined ? {} : { sysfsRoot: opts.configSysfsRoot }),
  };
  return { plan, notes };
}

/** Asks for the relay pin; the --relay-pin flag is the default, else there is none (never guessed). */
function askRelayPin(ask: Ask, write: (line: string) => void, flagBcm: number | undefined): Promise<number> {
  return askUntil(
    ask,
    write,
    'Relay pin: the GPIO (BCM number, e.g. 17) of the relay that switches the heater',
    flagBcm?.toString(),
    (answer) => {
      const pin = parseRelayPin(answer, true);
      return 'error' in pin ? pin : { value: pin.bcm };
    },
  );
}

/** What is worth telling about the relay pin: another use, no GPIO chips, no Pi controller. */
async function relayNotes(scan: HardwareScan, relayBcm: number): Promise<string[]> {
  const notes = await relayPinNotes(relayBcm, scan.sysfsRoot, scan.mainChip);
  if (scan.chips.length === 0) {
    notes.push(`no GPIO chips here: the relay on ${describePin(relayBcm)} works only on a Raspberry Pi`);
  } else if (!scan.mainChip) {
    notes.push(
      "none of the GPIO chips is a Raspberry Pi's main controller: set gpio.chipLabel or gpio.base " +
        '(homeostat doctor lists the chips)',
    );
  }
  return notes;
}

/** What is worth telling about the sensor chosen: not there now, or no reading when init ran. */
function sensorNotes(scan: HardwareScan, sensor: PlannedSensor): string[] {
  if (sensor.kind === 'file_value') {
    const { channel } = sensor;
    return 'error' in channel.reading
      ? [
          `${describeKernelSensor(channel)} gave no reading when init ran: ${channel.reading.error}; doctor reads it again`,
        ]
      : [];
  }
  const chosen = scan.sensors.find((s) => s.address === sensor.address);
  if (sensor.address !== undefined && !chosen) {
    return [`${sensor.address} is not on the 1-Wire bus now; doctor will look for it again`];
  }
  if (chosen?.error !== undefined) {
    return [`${chosen.address} gave no reading when init ran: check its wiring; doctor reads it again`];
  }
  return [];
}
