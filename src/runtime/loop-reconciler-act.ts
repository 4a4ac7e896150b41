import type { Logger } from 'pino';
import type { DeviceAvailability } from '../core/actuator-availability.js';
import type { ActuatorCommand } from '../core/command.js';
import { type LoopSpec, loopActuators } from '../core/loop-spec.js';
import type { ActuatorLevel } from '../core/types.js';
import type { ActuatorDriver } from '../drivers/types.js';

/** What the observe and act steps of a loop's cycle use (see LoopReconciler). */
export interface LoopActuatorPort {
  actuators: Map<string, ActuatorDriver>;
  logger: Logger;
}

/** The level of each actuator of the loop, as its driver reports it now (undefined: unknown). */
export async function observeActuators(
  spec: LoopSpec,
  { actuators, logger }: LoopActuatorPort,
): Promise<Record<string, ActuatorLevel>> {
  const levels: Record<string, ActuatorLevel> = {};
  for (const { actuator } of loopActuators(spec)) {
    try {
      levels[actuator.id] = await actuators.get(actuator.id)?.observe();
    } catch (error) {
      // Unknown is safe here: an unknown state is never confirmed, so it gets commanded.
      logger.debug({ err: error, actuator: actuator.id }, 'observe failed');
      levels[actuator.id] = undefined;
    }
  }
  return levels;
}

/** What each actuator of the loop with an availability topic last heard from its device. */
export function availability(
  spec: LoopSpec,
  { actuators }: LoopActuatorPort,
): { availability?: Record<string, DeviceAvailability> } {
  const said: Record<string, DeviceAvailability> = {};
  for (const { actuator } of loopActuators(spec)) {
    const state = actuators.get(actuator.id)?.availability?.();
    if (state !== undefined) said[actuator.id] = state;
  }
  return Object.keys(said).length > 0 ? { availability: said } : {};
}

/**
 * Writes every command, even after one fails; returns the failures (`id: reason`). Writes to
 * an actuator's safe level go first and all at once, so a slow or unreachable device (an MQTT
 * plug waiting out its publish timeout) never delays another actuator on its way to safety;
 * the others follow, at once too (a direction is off before the other starts).
 */
export async function writeCommands(
  spec: LoopSpec,
  commands: ActuatorCommand[],
  port: LoopActuatorPort,
): Promise<string[]> {
  const safeLevels = new Map(loopActuators(spec).map(({ actuator }) => [actuator.id, actuator.safeLevel]));
  const toSafe = commands.filter((command) => command.level === safeLevels.get(command.actuatorId));
  const others = commands.filter((command) => !toSafe.includes(command));
  const failures: string[] = [];
  for (const batch of [toSafe, others]) {
    const results = await Promise.all(batch.map((command) => writeCommand(command, port)));
    for (const failure of results) if (failure !== undefined) failures.push(failure);
  }
  return failures;
}

/** One command; the failure as `id: reason`, or undefined when the write went through. */
async function writeCommand(
  command: ActuatorCommand,
  { actuators, logger }: LoopActuatorPort,
): Promise<string | undefined> {
  const driver = actuators.get(command.actuatorId);
  try {
    if (!driver) throw new Error(`no driver for actuator "${command.actuatorId}"`);
    await driver.write(command.level);
    // Not `level`: pino reads that key as the log level.
    const fields = {
      actuator: command.actuatorId,
      to: command.level,
      reason: command.reason,
      detail: command.detail,
    };
    const message = `${command.actuatorId} → ${describeLevel(driver.kind, command.level)} (${command.reason}: ${command.detail})`;
    logger[moveLogLevel(driver.kind, command.reason)](fields, message);
    return undefined;
  } catch (error) {
    return `${command.actuatorId}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Write failures are logged once per streak (each cycle retries, so once per cycle would flood). */
export class WriteFailureStreak {
  /** Actuator writes are failing. */
  private failing = false;

  constructor(private readonly logger: Logger) {}

  report(failures: string[]): void {
    if (failures.length > 0 && !this.failing) {
      this.failing = true;
      this.logger.error(
        { failures },
        `actuator write failed: ${failures.join('; ')}; retrying with backoff, regulating the rest`,
      );
    } else if (failures.length === 0 && this.failing) {
      this.failing = false;
      this.logger.info('actuator writes go through again');
    }
  }
}

/**
 * How loud an actuator move is. A continuous actuator moves at every reading under regulation:
 * debug (the status line and the history have its level), so it does not drown the rest. A
 * relay switching is news a person looks for ("did the heater come on?"), a few times an hour:
 * info, as a move to the safe state. A device that did not do what it was told is a warning
 * (drift, retry); a keep-alive re-assert is debug.
 */
export function moveLogLevel(
  kind: 'relay' | 'continuous',
  reason: ActuatorCommand['reason'],
): 'debug' | 'info' | 'warn' {
  if (reason === 'drift' || reason === 'retry') return 'warn';
  if (reason === 'keep-alive') return 'debug';
  if (reason === 'regulate' && kind === 'continuous') return 'debug';
  return 'info';
}

function describeLevel(kind: 'relay' | 'continuous', level: number): string {
  if (kind === 'relay') return level > 0 ? 'ON' : 'OFF';
  return `${Math.round(level * 1000) / 10} %`;
}
