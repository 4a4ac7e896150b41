import type { Logger } from 'pino';
import type { DeviceLiveness, Reading } from '../core/types.js';
import type { SensorDriver } from '../drivers/types.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { StampClock } from '../time/stamps.js';

/** From this many sensors on, their periods are spread (see start()); a few read together cost nothing. */
const SPREAD_FROM_SENSORS = 16;

/** A sensor and how often to read it. */
export interface SampledSensor {
  driver: SensorDriver;
  /** Time between reads, ms (> 0). */
  periodMs: number;
}

export interface SamplerOptions {
  clock: Clock;
  sensors: SampledSensor[];
  /**
   * Reads allowed at once (integer >= 1); default 2. A DS18B20 read holds one of libuv's four
   * threadpool threads for ~750 ms, and fs, DNS and crypto share that pool.
   */
  maxConcurrentReads?: number;
  logger: Logger;
  /**
   * Called after each reading, good or non-finite (a NaN must reach the loops at once),
   * typically to trigger the loops that use the sensor.
   */
  onReading?: (sensorId: string, reading: Reading) => void;
}

interface SensorSlot {
  readonly id: string;
  sensor: SampledSensor;
  timer?: TimerHandle;
  /** Queued or reading: a sensor never has two reads at once. */
  busy: boolean;
  /** In a failure streak: logged once when it starts and once when it ends. */
  failing: boolean;
  /** Dropped by reconfigure(): a read still in flight is ignored when it lands. */
  removed?: boolean;
  /** readNow() came while a read ran: it may have fetched the value before the news, so read again. */
  readAgain?: boolean;
}

/**
 * Reads each sensor on its own period, off the control path, and keeps the latest reading
 * stamped on the monotonic clock, handed out in wall time (time/stamps.ts): a wall-clock step
 * moves what it hands out with nothing of its own moved, so a reading taken a second ago
 * still looks a second old, neither hours stale nor stamped in the future. A read that fails
 * (throws: a CRC error, a device gone) keeps the previous reading, so it ages and the loop's
 * staleness check sees the sensor go quiet; a read that returns NaN or ±Infinity is a reading
 * too — the sensor says the value is unknown now — and replaces the previous one at once, so
 * the loop goes safe in its next cycle. Reads queue behind `maxConcurrentReads`.
 */
export class Sampler {
  /** Last error per sensor id; cleared by a good read. */
  readonly errors = new Map<string, string>();
  readonly #opts: SamplerOptions;
  readonly #maxConcurrentReads: number;
  #slots: SensorSlot[];
  /** The latest readings, their times (`atMs`, liveness) as stamps (monotonic ms). */
  readonly #latest = new Map<string, Reading>();
  readonly #stamps: StampClock;
  readonly #queue: SensorSlot[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #activeReads = 0;
  #started = false;
  #stopped = false;

  constructor(opts: SamplerOptions) {
    this.#stamps = new StampClock(
      () => opts.clock.nowMs(),
      () => opts.clock.monotonicMs(),
    );
    const maxConcurrentReads = opts.maxConcurrentReads ?? 2;
    if (!Number.isInteger(maxConcurrentReads) || maxConcurrentReads < 1) {
      throw new RangeError(`sampler: maxConcurrentReads must be an integer >= 1, got ${maxConcurrentReads}`);
    }
    const ids = new Set<string>();
    for (const sensor of opts.sensors) {
      const { id } = sensor.driver;
      if (ids.has(id)) throw new Error(`sampler: duplicate sensor id "${id}"`);
      ids.add(id);
      if (!(sensor.periodMs > 0) || !Number.isFinite(sensor.periodMs)) {
        throw new RangeError(
          `sampler: sensor "${id}": periodMs must be a finite number > 0, got ${sensor.periodMs}`,
        );
      }
    }
    this.#opts = opts;
    this.#maxConcurrentReads = maxConcurrentReads;
    this.#slots = opts.sensors.map((sensor) => ({
      id: sensor.driver.id,
      sensor,
      busy: false,
      failing: false,
    }));
  }

  /** Reads every sensor now, then each on its own period. Calling it again does nothing. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const count = this.#slots.length;
    const spread = count > SPREAD_FROM_SENSORS;
    this.#slots.forEach((slot, index) => {
      this.#enqueue(slot);
      // Many sensors armed together would be read, and their loops cycled, in one burst every
      // period (200 loops: one long stall per period): their first period is spread over one.
      const firstDelayMs = spread ? (slot.sensor.periodMs * (index + 1)) / count : slot.sensor.periodMs;
      this.#armPeriod(slot, firstDelayMs);
    });
  }

  /** Stops the timers, drops queued reads and resolves once in-flight reads have finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const slot of this.#slots) {
      if (slot.timer !== undefined) this.#opts.clock.clearTimer(slot.timer);
      slot.timer = undefined;
    }
    for (const slot of this.#queue) slot.busy = false;
    this.#queue.length = 0;
    await Promise.all(this.#inFlight);
  }

  /**
   * Reads a sensor now, off its period (a push driver announced a new value); ignored before
   * `start()`, after `stop()` and for unknown sensors; while its read is queued it is already
   * covered, and while its read is running that read may have fetched the value before the news
   * (a window opened mid-read), so the sensor is read once more when it lands.
   */
  readNow(sensorId: string): void {
    if (!this.#started || this.#stopped) return;
    const slot = this.#slots.find((s) => s.id === sensorId);
    if (slot === undefined) return;
    if (!slot.busy) this.#enqueue(slot);
    else if (!this.#queue.includes(slot)) slot.readAgain = true;
  }

  /**
   * The latest reading of a sensor (possibly NaN/±Infinity), if any: `atMs` is the clock time the read completed, or
   * for push drivers (`readStamped`) the time the value arrived.
   */
  latest(sensorId: string): Reading | undefined {
    const stored = this.#latest.get(sensorId);
    return stored && this.#shown(stored);
  }

  /**
   * The latest reading as a loop judges it: when reads failed after it was taken, it carries
   * the failure (`lastError`), so the loop's SensorHealthy message says what failed rather
   * than only how old the reading is.
   */
  latestForLoop(sensorId: string): Reading | undefined {
    const reading = this.latest(sensorId);
    const lastError = this.errors.get(sensorId);
    return reading && lastError !== undefined && Number.isFinite(reading.value)
      ? { ...reading, lastError }
      : reading;
  }
  /** A stored reading with its stamps in wall time, as of now. */
  #shown(stored: Reading): Reading {
    const toWall = (stampMs: number) => this.#stamps.wallOf(stampMs);
    const shown: Reading = { ...stored, atMs: toWall(stored.atMs) };
    if (stored.liveness !== undefined) shown.liveness = livenessTimesMapped(stored.liveness, toWall);
    return shown;
  }

  /**
   * Changes the sensor set (config reload). A sensor with the same driver instance keeps its
   * schedule and its latest reading — loops using it see no gap; a new or replaced driver is
   * read at once; a removed one stops and its reading is forgotten.
   */
  reconfigure(sensors: SampledSensor[]): void {
    const next: SensorSlot[] = [];
    const wanted = new Map(sensors.map((sensor) => [sensor.driver.id, sensor]));
    for (const slot of this.#slots) {
      const sensor = wanted.get(slot.id);
      if (sensor && sensor.driver === slot.sensor.driver) {
        const periodChanged = sensor.periodMs !== slot.sensor.periodMs;
        slot.sensor = sensor;
        if (periodChanged && this.#started && slot.timer !== undefined) {
          this.#opts.clock.clearTimer(slot.timer);
          this.#armPeriod(slot);
        }
        next.push(slot);
        wanted.delete(slot.id);
        continue;
      }
      slot.removed = true;
      if (slot.timer !== undefined) this.#opts.clock.clearTimer(slot.timer);
      slot.timer = undefined;
      this.#latest.delete(slot.id);
      this.errors.delete(slot.id);
    }
    const queued = this.#queue.filter((slot) => !slot.removed);
    this.#queue.length = 0;
    this.#queue.push(...queued);
    for (const sensor of wanted.values()) {
      if (!(sensor.periodMs > 0) || !Number.isFinite(sensor.periodMs)) {
        throw new RangeError(`sampler: sensor "${sensor.driver.id}": periodMs must be a finite number > 0`);
      }
      const slot: SensorSlot = { id: sensor.driver.id, sensor, busy: false, failing: false };
      next.push(slot);
      if (this.#started && !this.#stopped) {
        this.#enqueue(slot);
        this.#armPeriod(slot);
      }
    }
    this.#slots = next;
  }

  #armPeriod(slot: SensorSlot, delayMs = slot.sensor.periodMs): void {
    slot.timer = this.#opts.clock.setTimer(() => {
      slot.timer = undefined;
      if (this.#stopped || slot.removed) return;
      this.#enqueue(slot);
      this.#armPeriod(slot);
    }, delayMs);
  }

  #enqueue(slot: SensorSlot): void {
    if (slot.busy) {
      this.#opts.logger.debug(
        { sensor: slot.id },
        `sensor ${slot.id}: previous read still running, skipping`,
      );
      return;
    }
    slot.busy = true;
    this.#queue.push(slot);
    this.#pump();
  }

  #pump(): void {
    while (!this.#stopped && this.#activeReads < this.#maxConcurrentReads) {
      const slot = this.#queue.shift();
      if (slot === undefined) return;
      this.#activeReads++;
      const read = this.#read(slot);
      this.#inFlight.add(read);
      void read.then(() => this.#inFlight.delete(read));
    }
  }

  /** Never rejects. */
  async #read(slot: SensorSlot): Promise<void> {
    let value: unknown;
    let atMs: number | undefined;
    let liveness: DeviceLiveness | undefined;
    let whyNotANumber: string | undefined;
    let failed = false;
    let error: unknown;
    // A driver stamps in the frame the read started in, even if the wall clock steps meanwhile.
    const stampOf = this.#stamps.stampsOfFrameNow();
    try {
      const { driver } = slot.sensor;
      if (driver.readStamped) ({ value, atMs, liveness, whyNotANumber } = await driver.readStamped());
      else value = await driver.read();
    } catch (err) {
      failed = true;
      error = err;
    }
    const stamps = {
      atMs: atMs === undefined ? undefined : stampOf(atMs),
      liveness: liveness && livenessTimesMapped(liveness, stampOf),
    };
    if (failed) {
      this.#recordError(slot, error instanceof Error ? error.message : String(error), error);
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      this.#record(slot, value, stamps);
    } else {
      // The sensor says the value is unknown now (a probe disconnected, `nan` from ESPHome,
      // `null` from Tasmota): stored as the latest reading, so the loop judges it NotFinite and
      // goes safe at once instead of running on the last good value until it goes stale.
      // A driver that knows why (a contact's garbage payload, its device offline) says so.
      const notANumber = typeof value === 'number' ? value : Number.NaN;
      const problem = whyNotANumber ?? `sensor reports not a number (${String(value)})`;
      this.#record(slot, notANumber, { ...stamps, whyNotANumber }, problem);
    }
    slot.busy = false;
    this.#activeReads--;
    if (slot.readAgain) {
      slot.readAgain = false;
      if (!this.#stopped && !slot.removed) this.#enqueue(slot);
    }
    this.#pump();
  }

  /**
   * Stores a reading and tells the loops; `problem` marks a non-finite one (an error streak).
   * `liveness`: what a push driver's device showed of its life (the loop's staleness rule reads it).
   */
  #record(slot: SensorSlot, value: number, stamps: Stamps, problem?: string): void {
    if (slot.removed) return;
    const { logger, onReading } = this.#opts;
    const stored: Reading = { value, atMs: stamps.atMs ?? this.#stamps.stamp() };
    if (stamps.liveness !== undefined) stored.liveness = stamps.liveness;
    if (stamps.whyNotANumber !== undefined) stored.whyNotANumber = stamps.whyNotANumber;
    this.#latest.set(slot.id, stored);
    if (problem !== undefined) {
      this.errors.set(slot.id, problem);
      if (!slot.failing) {
        slot.failing = true;
        logger.warn({ sensor: slot.id }, `sensor ${slot.id}: ${problem}; its loops go to their safe state`);
      }
    } else {
      this.errors.delete(slot.id);
      if (slot.failing) {
        slot.failing = false;
        logger.info({ sensor: slot.id }, `sensor ${slot.id}: reading again`);
      }
    }
    if (onReading === undefined) return;
    try {
      onReading(slot.id, this.#shown(stored));
    } catch (err) {
      logger.warn({ err, sensor: slot.id }, `sensor ${slot.id}: onReading hook threw`);
    }
  }

  #recordError(slot: SensorSlot, message: string, err: unknown): void {
    this.errors.set(slot.id, message);
    // The driver refuses its last value now (a device back online without a new one, its signs
    // of life gone): the kept reading's liveness is from before, so it no longer counts and
    // the reading ages alone.
    const latest = this.#latest.get(slot.id);
    if (latest?.liveness !== undefined) {
      this.#latest.set(slot.id, { value: latest.value, atMs: latest.atMs });
    }
    if (slot.failing) return;
    slot.failing = true;
    this.#opts.logger.warn(
      { err, sensor: slot.id },
      `sensor ${slot.id}: ${message}; keeping the last reading until it goes stale`,
    );
  }
}

/**
 * A read's time stamps (monotonic): when the value was taken (push drivers) and its device's
 * signs of life.
 */
interface Stamps {
  atMs: number | undefined;
  liveness: DeviceLiveness | undefined;
  /** Why the value is not a number, where the driver knows (only with a non-finite value). */
  whyNotANumber?: string | undefined;
}

/** `liveness` with its times converted by `convert` (wall time to stamps and back). */
function livenessTimesMapped(liveness: DeviceLiveness, convert: (ms: number) => number): DeviceLiveness {
  const { seenAtMs, offlineSinceMs } = liveness;
  return {
    ...liveness,
    ...(seenAtMs === undefined ? {} : { seenAtMs: convert(seenAtMs) }),
    ...(offlineSinceMs === undefined ? {} : { offlineSinceMs: convert(offlineSinceMs) }),
  };
}
