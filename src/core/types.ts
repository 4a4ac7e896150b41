/**
 * Types shared by the pure core. Nothing in src/core reads the clock, does IO or logs:
 * every function takes `nowMs` and returns new state.
 *
 * Units are in the names: `...Ms` milliseconds since the epoch (or a duration in ms),
 * `...S` seconds, `...C` degrees Celsius. A loop's regulated quantity has the unit of its
 * sensor (°C for temperature, %RH for humidity); fields named `value`/`setpoint` use it.
 */

/** What a loop is asked to do. Which modes a loop allows follows from its quantity and actuators. */
/** Every mode (the config's enum and the schedule's checks read this list). */
export const MODES = ['off', 'heat', 'cool', 'heat_cool', 'humidify', 'dehumidify', 'auto'] as const;
export type Mode = (typeof MODES)[number];

/** Which way an actuator pushes the quantity: a heater or humidifier raises it, a cooler lowers it. */
export type Direction = 'raise' | 'lower';

/**
 * What the loop is doing right now, in Home Assistant's vocabulary: climate `action_topic`
 * (off, idle, heating, cooling, drying, fan) and humidifier `action_topic` (adds humidifying).
 */
export type Action = 'off' | 'idle' | 'heating' | 'cooling' | 'drying' | 'fan' | 'humidifying';

/** The physical quantity a loop regulates; decides its modes and Home Assistant entity. */
export type Quantity = 'temperature' | 'humidity' | 'generic';

/** A sensor value stamped with the time it was measured (not the time it was used). */
export interface Reading {
  value: number;
  atMs: number;
  /**
   * Why the sensor's latest read failed, when it failed after this reading was taken: the
   * reading then ages towards stale, and the SensorHealthy message says why no newer one came.
   */
  lastError?: string;
  /**
   * Why `value` is NaN, when the driver can say what the device sent instead of a value
   * (`payload "banana" is neither on (true) nor off (false)`): the loop's message repeats it.
   */
  whyNotANumber?: string;
  /**
   * How the device shows it is alive apart from its value (core/liveness.ts): a quiet sensor
   * whose device is known alive keeps its value in force up to `maxQuietMs`. Absent: the value
   * alone shows the sensor is alive (stale after the loop's staleAfterMs).
   */
  liveness?: DeviceLiveness;
}

/** A device's sign of life apart from its value: an availability topic, a heartbeat, `last_seen`. */
export interface DeviceLiveness {
  /** When the device last showed it is alive, ms; the read's time while an availability topic says online. */
  seenAtMs?: number;
  /** When the device said it went offline, ms: the reading is void from then on, whatever its age. */
  offlineSinceMs?: number;
  /** How it shows it, for messages: `availability zigbee2mqtt/probe/availability`, `heartbeat tele/x/STATE`. */
  via: string;
  /** How long a value may stay unchanged while the device is seen alive, ms (the sensor's maxQuietS). */
  maxQuietMs: number;
}

/**
 * An actuator's state as a fraction of full output, 0..1. Relays are 0 (off) or 1 (on).
 * `undefined` means unknown (never observed, or the driver could not tell): unknown never
 * counts as confirmed, so a wanted state is (re)commanded.
 */
export type ActuatorLevel = number | undefined;

/** Kubernetes-shaped condition (type, status, reason, message, lastTransitionTime). */
export interface Condition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** When `status` last changed, ms since epoch. */
  lastTransitionMs: number;
  observedGeneration: number;
}

export type ConditionType =
  | 'SensorHealthy'
  | 'ActuatorConfirmed'
  | 'Converged'
  | 'Faulted'
  | 'Reconciled'
  /** Loops with interlocks: True while one pauses the loop (window open, float switch). */
  | 'Interlocked'
  /**
   * Loops that ran an autotune: True (Noise, Relay) while it runs, False once it ended (Done,
   * or Aborted with the reason in the message).
   */
  | 'Autotuning'
  /** Set by the runtime, not reconcile: False while the config file on disk is invalid. */
  | 'ConfigValid'
  /**
   * Set by the runtime, not reconcile: False while the database cannot be used (reason Corrupt,
   * Full, Locked, Unwritable or Failed); regulation goes on from the desired state in memory.
   */
  | 'StorageHealthy'
  /**
   * Set by the runtime when the HTTP API is on: False while it cannot listen (reason PortInUse,
   * NoPermission or Failed; retried); regulation goes on.
   */
  | 'ApiServing'
  /**
   * Set by the runtime once another process with this node id was seen on the broker: False
   * (reason NodeIdClash) while the clash lasts, True (Unique) after; regulation goes on.
   */
  | 'NodeIdUnique'
  /**
   * Set by the runtime when alerts.channels names any: False while a channel cannot deliver
   * (reason SecretUnreadable or DeliveryFailing; the alerts wait in the outbox); regulation goes on.
   */
  | 'AlertsDelivering';
