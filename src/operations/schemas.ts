import { z } from 'zod';
import { apiSchemas, isoTime } from './registry.js';
import { fopdtModelFields, pidGainFields } from './write-schemas.js';

/**
 * The HTTP API's shapes, written once: the server validates requests with them, the OpenAPI
 * document (openapi.ts) is generated from them, and a test checks every response against them
 * (test/http/api-schemas.test.ts), so the document cannot drift from what the daemon sends.
 *
 * Times are ISO 8601 strings (`…At`); values are in the loop's unit (`unit`). The daemon's
 * clock is the source: under `--speed` it runs ahead of the wall clock.
 */

export { apiSchemas } from './registry.js';

export const conditionView = z
  .object({
    type: z
      .string()
      .describe('SensorHealthy, ActuatorConfirmed, Converged, Faulted, Reconciled, Interlocked…'),
    status: z.enum(['True', 'False', 'Unknown']),
    reason: z.string(),
    message: z.string(),
    lastTransitionAt: isoTime,
    observedGeneration: z.number().int(),
  })
  .register(apiSchemas, { id: 'Condition' });

export const actuatorView = z
  .object({
    wanted: z.number().describe('Level the loop wants, 0..1'),
    observed: z.number().nullable().describe('Level the driver reports, 0..1; null when unknown'),
  })
  .register(apiSchemas, { id: 'Actuator' });

/** A loop's autotune as its status shows it (LoopStatus.autotune, src/core/status.ts). */
export const autotuneView = z
  .object({
    phase: z.enum(['noise', 'relay', 'done', 'aborted']).describe('noise and relay: running'),
    side: z.enum(['raise', 'lower']).describe('The side being tuned'),
    cycles: z.number().int().describe('Relay cycles completed'),
    cyclesNeeded: z.number().int(),
    elapsedMs: z.number(),
    remainingMs: z.number().describe('Expected time left; 0 once ended'),
    remainingIsLimit: z
      .boolean()
      .describe('remainingMs is the time limit, not an estimate (no period measured yet)'),
    noiseSigma: z.number().optional().describe('Sensor noise measured first, loop unit'),
    hysteresis: z.number().optional().describe("The relay's band half-width, loop unit"),
    abortReason: z.string().optional(),
    result: z
      .object({
        ...fopdtModelFields,
        ...pidGainFields,
        setpointWeight: z
          .number()
          .optional()
          .describe('Setpoint weight b (P = kp·(b·r − y)): keeps a setpoint step within 2 % overshoot'),
        closedLoopS: z.number(),
        band: z.number().describe('The alternative for a relay: a duty band, loop unit'),
        windowS: z.number().describe('Suggested for a relay: a time-proportioning window, s'),
        reliability: z
          .object({ verdict: z.enum(['sound', 'flagged', 'refused']), reasons: z.array(z.string()) })
          .optional()
          .describe('The model’s verdict: flagged models are stored but never put in force without a person'),
      })
      .optional()
      .describe('Once done: the identified model (null: an unknown standard error) and the gains from it'),
  })
  .register(apiSchemas, { id: 'Autotune' });

/** The `schedule` part of a loop's status (core/schedule/effective-desired.ts ScheduleStatus). */
export const scheduleView = z
  .object({
    source: z
      .enum(['manual', 'preset', 'schedule', 'profile'])
      .describe('Where the setpoint in force comes from'),
    preset: z
      .string()
      .nullable()
      .describe('The preset in force (selected by hand or by the schedule); null: none'),
    heldUntil: z
      .string()
      .optional()
      .describe('ISO time a manual change overriding the schedule or profile holds until'),
    profile: z
      .object({
        name: z.string(),
        state: z.enum(['running', 'paused', 'finished']),
        stepIndex: z.number().int().describe('The current step, from 0'),
        stepCount: z.number().int(),
        stepKind: z.enum(['hold', 'ramp']),
        stepRemainingS: z.number().describe('Time left in the step, s'),
        totalRemainingS: z.number().describe('Time left in the profile, s'),
        stepEndsAt: z
          .string()
          .nullable()
          .optional()
          .describe('ISO time the step ends (stable while running); null while paused'),
        endsAt: z
          .string()
          .nullable()
          .optional()
          .describe('ISO time the profile ends (stable while running); null while paused'),
      })
      .optional()
      .describe('The profile started (until stopped), even while a manual change overrides it'),
    next: z
      .array(
        z.object({
          at: z.string().describe('ISO time'),
          setpoint: z.number().describe('The setpoint then (a ramp: where it goes)'),
          mode: z.string().optional(),
          source: z.enum(['manual', 'preset', 'schedule', 'profile']),
        }),
      )
      .describe('The next changes (at most 3), soonest first'),
  })
  .register(apiSchemas, { id: 'Schedule' });

export const sensorSetView = z
  .object({
    combine: z.enum(['mean', 'median', 'min', 'max', 'first']),
    used: z.array(z.string()).describe('Sensors whose readings made the measured value, in config order'),
    dropped: z
      .array(
        z.object({
          sensor: z.string(),
          reason: z.enum(['Missing', 'Stale', 'Offline', 'NotFinite', 'Implausible', 'Outlier', 'Disagree']),
          message: z.string(),
          distance: z
            .number()
            .optional()
            .describe('Outlier: distance from the others’ median; Disagree: from the other reading'),
        }),
      )
      .describe('Sensors left out this cycle, and why'),
    summary: z.string().describe('One line, e.g. "median of 3 (dropped probe-2: 4.8 °C from the others)"'),
  })
  .register(apiSchemas, { id: 'SensorSet' });

export const loopView = z
  .object({
    loop: z.string(),
    name: z.string().describe('The config name, or the loop id'),
    quantity: z.enum(['temperature', 'humidity', 'generic']),
    unit: z.string(),
    limits: z.object({ min: z.number(), max: z.number() }).describe('Setpoints accepted, inclusive'),
    step: z.number().describe('Setpoint step of user interfaces (not enforced)'),
    modes: z.array(z.string()).describe('Modes this loop accepts'),
    mode: z.string(),
    setpoint: z.number(),
    measured: z
      .number()
      .nullable()
      .describe('The reading used by the last cycle; null when missing or unhealthy'),
    measuredAt: isoTime.nullable(),
    output: z.number().describe('Signed controller output −1..1: positive raises, negative lowers'),
    action: z.string().describe('off, idle, heating, cooling, drying, humidifying, fan'),
    generation: z.number().int().describe('Generation of the desired state'),
    observedGeneration: z.number().int().describe('Generation the loop has reconciled'),
    desired: z
      .object({
        setpointSource: z.string(),
        modeSource: z.string(),
      })
      .describe('Where the desired setpoint and mode came from (file, mqtt, http, cli, homeassistant)'),
    controller: z.enum(['pid', 'hysteresis']).describe('pid loops can be autotuned and take tunings'),
    tuning: z
      .object({
        active: z
          .union([z.number().int(), z.literal('config')])
          .describe('The stored tuning in force, or "config": the config file’s gains'),
        latest: z
          .number()
          .int()
          .optional()
          .describe('The newest tuning version the loop was given; above active: a proposal to accept'),
        refused: z
          .object({
            reason: z.string(),
            at: z.string().describe('ISO time the loop refused it'),
            generation: z.number().int().describe('The generation of the start request refused'),
          })
          .optional()
          .describe('The last autotune start the loop itself refused (a latched fault, no usable reading…)'),
        unrecorded: z
          .string()
          .optional()
          .describe('A finished autotune whose result could not be stored yet (retried every cycle): why'),
      })
      .describe('The gains in force (GET /api/loops/{loop}/tunings lists them)'),
    autotune: autotuneView
      .optional()
      .describe('The running autotune, or the last one’s result or abort reason; absent: none since start'),
    presets: z
      .array(z.string())
      .optional()
      .describe("The loop's preset names (POST /api/loops/{loop}/preset); absent: none"),
    profiles: z
      .array(z.string())
      .optional()
      .describe("The loop's profile names (POST /api/loops/{loop}/profile); absent: none"),
    schedule: scheduleView
      .optional()
      .describe(
        'Presets, weekly schedule, profile: what is in force and what comes next; absent: none configured',
      ),
    sensors: sensorSetView
      .optional()
      .describe(
        'A loop with several sensors (loops.<id>.sensors): the last cycle’s combination; absent: one sensor',
      ),
    actuators: z.record(z.string(), actuatorView),
    conditions: z.array(conditionView),
    updatedAt: isoTime.nullable().describe('When the last cycle ran; null before the first'),
  })
  .register(apiSchemas, { id: 'Loop' });

export const loopsResponse = z.object({ loops: z.array(loopView) }).register(apiSchemas, { id: 'Loops' });

export const healthView = z
  .object({
    ok: z.boolean().describe('Every loop cycled recently (the systemd watchdog rule)'),
    silentLoops: z
      .array(z.object({ loop: z.string(), silentS: z.number() }))
      .describe('Loops with no successful cycle within their allowed silence'),
    storage: z.object({ healthy: z.boolean(), message: z.string() }),
    mqtt: z.object({ configured: z.boolean(), connected: z.boolean() }),
  })
  .register(apiSchemas, { id: 'Health' });

export const nodeResponse = z
  .object({
    node: z.object({
      id: z.string(),
      name: z.string(),
      version: z.string(),
      startedAt: isoTime,
      now: isoTime.describe("The daemon's clock"),
      configGeneration: z.number().int().nullable(),
    }),
    health: healthView,
  })
  .register(apiSchemas, { id: 'Node' });

export const historyPoint = z
  .object({
    at: isoTime,
    measured: z.number().nullable(),
    setpoint: z.number(),
    output: z.number(),
    action: z.string(),
  })
  .register(apiSchemas, { id: 'HistoryPoint' });

/** Registered with the recorded series as History in recorded-schemas.ts. */
export const historyResponse = z.object({
  loop: z.string(),
  from: isoTime,
  to: isoTime,
  downsampled: z.boolean().describe('Points are bucket averages (more samples than maxPoints)'),
  points: z.array(historyPoint),
});

export const eventView = z
  .object({
    at: isoTime,
    loop: z.string().nullable(),
    kind: z
      .string()
      .describe('setpoint-changed, mode-changed, fault-raised, fault-reset, actuator, command-rejected…'),
    source: z.string().nullable(),
    message: z.string(),
    data: z.unknown().optional(),
  })
  .register(apiSchemas, { id: 'Event' });

export const eventsResponse = z.object({ events: z.array(eventView) }).register(apiSchemas, { id: 'Events' });

export const errorResponse = z
  .object({ error: z.string().describe('What went wrong, for a person') })
  .register(apiSchemas, { id: 'Error' });

/** Server-Sent Events on GET /api/stream: `event: status` data Loop, `event: event` data Event. */
export const streamEvents = { status: loopView, event: eventView } as const;

export type LoopView = z.infer<typeof loopView>;
export type HealthView = z.infer<typeof healthView>;
export type NodeResponse = z.infer<typeof nodeResponse>;
export type { HistoryResponse } from './recorded-schemas.js';
export type HistoryPoint = z.infer<typeof historyPoint>;
export type EventView = z.infer<typeof eventView>;
export type AutotuneView = z.infer<typeof autotuneView>;
export * from './write-schemas.js';
