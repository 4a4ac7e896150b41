/** A regulation loop's section: one sensor (or several), one or two actuators, one setpoint, its monitors. */
import { z } from 'zod';
import { loopMonitorFields } from '../../kinds/monitors/registry.js';
import { loopAlertsSchema } from './alerts.js';
import { brewfatherSchema } from './brewfather.js';
import { modeSchema, QUANTITIES, rangeSchema, ref } from './common.js';
import { controllerSchema } from './controllers.js';
import { checkLoop } from './loop-checks.js';
import { recordFields } from './record.js';
import { checkSchedule, scheduleFields } from './schedule.js';
import { sensorSetFields } from './sensor-set.js';

export const loopSchema = z
  .strictObject({
    name: z.string().min(1).optional().describe('Human-readable name. Default: the loop id.'),
    quantity: z
      .enum(QUANTITIES)
      .default('temperature')
      .describe('What is regulated; decides the modes and defaults. Default temperature.'),
    unit: z
      .string()
      .optional()
      .describe(
        "Unit shown with the loop's values (status, dashboard, Home Assistant); a label only, no value is " +
          'converted. Default °C for temperature, % for humidity, none for generic.',
      ),
    sensor: ref('sensor')
      .optional()
      .describe(
        'Id of the sensor that measures the quantity. Give sensor or sensors (several), not both. ' +
          'Default: none (then sensors is required).',
      ),
    ...sensorSetFields,
    ...recordFields,
    raise: ref('actuator')
      .optional()
      .describe(
        'Id of the actuator that raises the quantity (heater, humidifier); an actuator serves one loop. ' +
          'Default: none; at least one of raise and lower.',
      ),
    lower: ref('actuator')
      .optional()
      .describe(
        'Id of the actuator that lowers the quantity (cooler, dehumidifier); an actuator serves one loop. ' +
          'Default: none; at least one of raise and lower.',
      ),
    setpoint: z
      .number()
      .describe(
        'Target value (loop unit); must lie within limits. A change at run time (MQTT, Home Assistant, ' +
          'the dashboard, homeostat set) stays in force across restarts until this value in the file ' +
          'changes. Required.',
      ),
    mode: modeSchema
      .optional()
      .describe(
        'What the loop is asked to do; the modes allowed depend on quantity and actuators. A change at ' +
          'run time stays in force until this value in the file changes. Default: heat_cool (auto for ' +
          'humidity) with both actuators, heat (humidify) with only raise, cool (dehumidify) with only lower.',
      ),
    limits: rangeSchema('setpoint allowed (from this file, MQTT or Home Assistant)').describe(
      'Setpoint limits (loop unit). Required.',
    ),
    ...scheduleFields,
    step: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'Setpoint step for user interfaces (loop unit). Default 0.5 (temperature, generic), 1 (humidity).',
      ),
    staleAfterS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        "A reading older than this many seconds is missing: safe state. Default: the sensor's staleAfterS. " +
          'With sensors: each is judged by its own staleAfterS, and this, when given, caps them.',
      ),
    retryInitialS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'First re-send of an actuator command not yet confirmed, seconds; doubles per attempt up to ' +
          'the keep-alive (300 s). Raise it for devices that answer slowly. Default 5.',
      ),
    plausible: rangeSchema('plausible reading')
      .optional()
      .describe(
        'Readings outside are faults: safe state. Default -55..125 (temperature in °C), -67..257 (°F), ' +
          '0..100 (humidity), none (generic).',
      ),
    deadband: z
      .number()
      .min(0)
      .default(0)
      .describe('Split range: no action while |setpoint − measured| ≤ deadband / 2 (loop unit). Default 0.'),
    changeoverS: z
      .number()
      .min(0)
      .default(300)
      .describe(
        'Minimum seconds between one direction switching off and the other switching on. Default 300.',
      ),
    effectWatch: z
      .strictObject({
        periodS: z
          .number()
          .gt(0)
          .default(900)
          .describe('How long full output may go without effect, seconds. Default 900.'),
        minChange: z
          .number()
          .gt(0)
          .default(1)
          .describe('The least change (loop unit) full output must achieve within periodS. Default 1.'),
      })
      .optional()
      .describe(
        'Latch a fault when full heating (cooling) does not move the value by minChange within periodS, ' +
          "like Marlin's thermal protection: every actuator safe until the fault is reset (MQTT " +
          '<loop>/fault/reset or the Home Assistant button). Choose periodS from how fast the plant ' +
          'responds at full output. Default: off.',
      ),
    // The safety monitors' blocks: cutoff, stuckWatch, runawayWatch (kinds/monitors/).
    ...loopMonitorFields,
    interlocks: z
      .array(
        z.strictObject({
          sensor: ref('sensor').describe(
            'Id of the sensor that can pause the loop (a window switch, a float switch).',
          ),
          pauseWhen: z
            .number()
            .default(1)
            .describe(
              'The loop pauses while the sensor reads this value (a 0/1 input, gpio_input or mqtt_binary: 1 = open). Default 1.',
            ),
        }),
      )
      .default([])
      .describe(
        'Conditions that pause the loop: every actuator at its safe state while any interlock reads its ' +
          'pauseWhen value, or has no trustworthy reading: none yet, stale, its device offline, or not a number ' +
          '(a broken switch or a garbage payload pauses too; the Interlocked condition says which). Default none.',
      ),
    controller: controllerSchema.describe('How the output is computed: pid or hysteresis. Required.'),
    alerts: loopAlertsSchema.optional(),
    brewfather: brewfatherSchema.optional(),
    autotune: z
      .strictObject({
        autoApply: z
          .boolean()
          .default(false)
          .describe(
            "Put a finished autotune's gains in force at once, except on a loop with a heater and a cooler (one gain " +
              "set serves both, one side was tuned) and for a kp more than 10× away from the file's: those stay " +
              'proposals. false: every result is a proposal to accept (homeostat tuning LOOP latest, MQTT ' +
              '<loop>/tuning/set latest, the dashboard). Default false.',
          ),
        closedLoopS: z
          .number()
          .gt(0)
          .optional()
          .describe(
            'Closed-loop time constant the gains are computed for (SIMC τc), seconds: longer is gentler ' +
              '(spares a compressor, ignores noise), shorter is tighter. A request may give its own. ' +
              'Default: the identified dead time.',
          ),
        maxDurationS: z
          .number()
          .gt(0)
          .optional()
          .describe(
            'Longest an autotune may run, seconds; then it ends, the loop regulates on its gains as ' +
              'before. A request may give its own. Default 172800 (48 h).',
          ),
      })
      .optional()
      .describe(
        'Relay autotune of a pid loop (started by a request: homeostat autotune LOOP, MQTT <loop>/autotune/set, ' +
          'the dashboard): the loop switches its actuator around the setpoint, identifies the plant and ' +
          'computes PI gains, stored as a new tuning version. Only for controller type pid. Default: ' +
          'requests use these defaults (autoApply false).',
      ),
  })
  .describe('A regulation loop: one sensor (or several combined), one or two actuators, one setpoint.')
  .superRefine(checkSchedule)
  .superRefine(checkLoop);

export type RawLoop = z.output<typeof loopSchema>;
