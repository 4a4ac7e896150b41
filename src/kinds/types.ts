/**
 * What a hardware kind is: one descriptor per sensor or actuator kind (`src/kinds/sensors/*`,
 * `src/kinds/actuators/*`), listed in registry.ts. The config schema, the loop spec, the driver
 * factory, reload's driver identity and `homeostat doctor` all read the kind from here, so a new
 * kind is one file and one registry line.
 *
 * Kinds import drivers, core types and zod, never config (config imports kinds).
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ActuatorSpec } from '../core/loop-spec.js';
import type { GpioChipOverride } from '../drivers/gpio/chip.js';
import type { GpioPortFactory } from '../drivers/gpio/port.js';
import type { MqttTransport } from '../drivers/mqtt/transport.js';
import type { FopdtPlant } from '../drivers/sim/plant.js';
import type { ActuatorDriver, SensorDriver } from '../drivers/types.js';

/** Whatever a zod object schema with a `kind` literal parses to. */
export type KindSchema = z.ZodType<{ kind: string }> & z.core.$ZodTypeDiscriminable;

/** A sensor section after resolution: `staleAfterS` filled in (3 × periodS by default). */
export type Resolved<Section> = Section & { staleAfterS: number };

/** What a driver factory gets besides its own section. */
export interface DriverContext {
  id: string;
  /** The daemon's (possibly scaled) wall clock, ms: for the times a reading or a status carries out. */
  nowMs: () => number;
  /**
   * The daemon's (possibly scaled) monotonic clock, ms: for durations a driver measures itself
   * (a rate limit, a pulse window, the simulated world's time) and the arrival stamps it keeps
   * (time/stamps.ts). A wall-clock step does not move it, so a driver keeps no time that would
   * have to move with a step.
   */
  monotonicMs: () => number;
  /** The node's MQTT connection, or an offline one that explains why there is none. */
  transport(): MqttTransport;
  /** What every GPIO driver shares: where sysfs is, how pins are opened, the chip override. */
  gpio(): { sysfsRoot: string; portFactory: GpioPortFactory; chip: GpioChipOverride };
  /** The simulated plant `id`, created on first use. */
  plant(id: string): FopdtPlant;
  /** The simulation block: sensor noise and resolution per plant, the random seed. */
  simulation: { seed: number; plants: Record<string, { noise: number; quantization: number }> };
  /** Where drivers report payloads they do not understand. */
  logger: Logger | undefined;
}

/** Outcome of one doctor check: `skip` when it does not apply (no GPIO in this config, no systemd). */
export type CheckStatus = 'ok' | 'fail' | 'skip';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** What was found; several lines for several problems (config errors). */
  detail: string;
  /** How to fix a failure, one sentence a person can act on. */
  fix?: string;
}

/** What a thrown value says: an Error's message, anything else as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A check that failed by a thrown error: its message is the detail. */
export function failedCheck(name: string, error: unknown, fix: string): CheckResult {
  return { name, status: 'fail', detail: messageOf(error), fix };
}

/** What a kind's doctor check may use besides its sections. */
export interface DoctorEnv {
  /** Where sysfs is mounted (gpio.sysfsRoot). */
  sysfsRoot: string;
  nowMs: () => number;
}

/** A kind's `homeostat doctor` check, run once with every section of that kind. */
export interface KindDoctor<Section> {
  /** Printed when the config has no section of this kind; absent: nothing is printed. */
  whenAbsent?: CheckResult;
  check(items: { id: string; section: Section }[], env: DoctorEnv): Promise<CheckResult[]>;
}

/** Traits and behaviour both sensor and actuator kinds have. */
interface KindCommon<Section> {
  /** Driven by the simulation only (allows `--speed`). */
  simulated: boolean;
  /** Talks to a broker: needs the mqtt block, never simulated. */
  usesMqtt: boolean;
  /** The BCM GPIO pin it uses, if any (each pin once per file). */
  gpioPin?(section: Section): number | undefined;
  /**
   * The fields the driver is built from, a whitelist: two sections of this kind with equal
   * values there can share a running driver (a reload keeps it). Everything else (timing,
   * safe state, limits) is the loop's and changes without re-creating the driver.
   */
  driverFields: readonly (keyof Section & string)[];
}

/** A sensor kind; `Section` is its parsed config section. */
export interface SensorKind<S extends KindSchema = KindSchema, Section = z.output<S>>
  extends KindCommon<Section> {
  kind: z.output<S>['kind'];
  schema: S;
  /** Defaults that depend on other fields (a renamed key's old name), filled in once at load; absent: as parsed. */
  resolve?(raw: z.output<S>): Section;
  /** The simulated plant it reads, if any (checked to exist, and to match the loop's actuators). */
  plant?(section: Section): string | undefined;
  createDriver(section: Resolved<Section>, ctx: DriverContext): SensorDriver;
  doctor?: KindDoctor<Resolved<Section>>;
}

/** How a loop uses its actuator, for the spec builder. */
export interface LoopUse {
  /** The loop's kp when its controller is a PID (band modulation is a band of its output). */
  pidKp: number | undefined;
}

/**
 * How `homeostat safe` reaches an actuator once the daemon is gone (commands/safe.ts), from its
 * section alone: a GPIO relay pin, a hardware PWM channel, an MQTT command (with what protects
 * the device when the broker is not reached), or nothing that outlives the daemon (a simulated
 * actuator). commands/safe-plan.ts maps each `via` to the driver that acts on it; a new `via`
 * fails its type-check there until it has one.
 */
export type SafeTarget =
  | { via: 'gpio'; bcm: number; activeLow: boolean; safeLevel: 0 | 1 }
  | {
      via: 'pwm';
      chip: number;
      channel: number;
      safeLevel: number;
      periodNs?: number | undefined;
      polarity?: 'normal' | 'inversed' | undefined;
    }
  | { via: 'mqtt'; topic: string; payload: string; deadMan: string }
  | { via: 'none'; why: string };

/** An actuator kind; `Section` is its resolved config section. */
export interface ActuatorKind<S extends KindSchema = KindSchema, Section = z.output<S>>
  extends KindCommon<Section> {
  kind: z.output<S>['kind'];
  schema: S;
  /** relay: 0 or 1, shares `relayFields` (timing, modulation, safe state); continuous: 0..1. */
  output: 'relay' | 'continuous';
  /** Defaults that depend on other fields (a preset's topics), filled in once at load. */
  resolve(raw: z.output<S>): Section;
  /** The level forced on faults, stale readings, removal and shutdown. */
  safeLevel(section: Section): number;
  /** The simulated plant it drives and its gain, if any. */
  plant?(section: Section): { plant: string; gain: number } | undefined;
  /** The topic its commands go to, if any: two actuators on one topic would fight. */
  commandTopic?(section: z.output<S>): string | undefined;
  /** Its part of the loop spec (core/loop-spec.ts). */
  spec(id: string, section: Section, loop: LoopUse): ActuatorSpec;
  createDriver(section: Section, ctx: DriverContext): ActuatorDriver;
  /**
   * Required: what `homeostat safe` drives, and how, when the daemon died (SafeTarget); its safe
   * level exactly as the daemon would command it on shutdown.
   */
  safe(section: Section): SafeTarget;
  /**
   * What `safe` can still drive from the section of a config that no longer validates (edited
   * while the daemon ran), defaults as in the schema; undefined when it cannot tell. Absent:
   * nothing is guessed (an MQTT device needs the broker settings of a valid config).
   */
  safeFromBroken?(section: Record<string, unknown>): SafeTarget | undefined;
  doctor?: KindDoctor<Section>;
}

/** Identity helpers that infer the section type from the schema. */
export function sensorKind<S extends KindSchema, Section = z.output<S>>(
  // NoInfer: the section type is the schema's (or given), never guessed from a shared helper.
  kind: SensorKind<S, NoInfer<Section>>,
): SensorKind<S, Section> {
  return kind;
}

export function actuatorKind<S extends KindSchema, Section = z.output<S>>(
  // NoInfer: the section type is the schema's (or given), never guessed from a shared helper.
  kind: ActuatorKind<S, NoInfer<Section>>,
): ActuatorKind<S, Section> {
  return kind;
}
