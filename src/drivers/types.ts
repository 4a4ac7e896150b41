import type { DeviceAvailability } from '../core/actuator-availability.js';
import type { ActuatorLevel, Reading } from '../core/types.js';

/**
 * A sensor driver reads one value. It may be slow (a DS18B20 read holds ~750 ms); the
 * sampler calls it off the control path and stamps the result with the clock.
 * It throws (or returns a non-finite number) when no trustworthy value can be had.
 */
export interface SensorDriver {
  readonly id: string;
  /** True for drivers that only exist in simulation (allows `--speed`). */
  readonly simulated: boolean;
  read(): Promise<number>;
  /**
   * Push drivers (MQTT): the latest value stamped with the time it arrived, which the sampler
   * keeps instead of stamping `read()` with the time of the read (a value pushed a while ago
   * must not look fresh). Same errors as `read()`.
   */
  readStamped?(): Promise<Reading>;
  /**
   * Push drivers: `listener` is called when a message changed what `read()` reports, so the
   * sampler reads at once. Replaces the previous listener (registering again is harmless).
   */
  onValue?(listener: () => void): void;
  start?(): Promise<void>;
  /**
   * Releases what `start()` took (a subscription, a pin); calling it twice is harmless. What
   * `read()` does afterwards each driver states (test/drivers/contract/sensor-contract.ts).
   */
  stop?(): Promise<void>;
}

/**
 * An actuator driver. Commands are absolute levels (0..1; relays 0 or 1), never toggles,
 * so writing the same level twice is harmless. `observe()` reports the actual state
 * (GPIO readback, a plug's state topic); `undefined` means unknown.
 */
export interface ActuatorDriver {
  readonly id: string;
  readonly simulated: boolean;
  /** `relay` accepts only 0 and 1; `continuous` accepts any level in 0..1. */
  readonly kind: 'relay' | 'continuous';
  observe(): Promise<ActuatorLevel>;
  write(level: number): Promise<void>;
  /**
   * Devices that say whether they are alive (an MQTT plug's availability topic): what it last
   * said, read at every cycle with `observe()`; undefined when this device has no such topic.
   */
  availability?(): DeviceAvailability | undefined;
  /**
   * `listener` is called when the availability changes, so the daemon runs the actuator's loops
   * at once (offline is reported in the cycle it arrives). Replaces the previous listener.
   */
  onAvailability?(listener: () => void): void;
  start?(): Promise<void>;
  /**
   * Releases what `start()` took; calling it twice is harmless. Writes after it reject: the
   * daemon drives the safe state before stopping a driver, so a later write is a stale caller
   * (test/drivers/contract/actuator-contract.ts).
   */
  stop?(): Promise<void>;
}
