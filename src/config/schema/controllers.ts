import { z } from 'zod';
import { defaultDerivativeFilterS } from '../../core/pid.js';
import { rangeSchema } from './common.js';

const pidSchema = z
  .strictObject({
    type: z.literal('pid').describe('Controller type: decides which other keys apply. Required.'),
    kp: z.number().gt(0).describe('Proportional gain: output fraction (0..1) per unit of error. Required.'),
    tiS: z.number().min(0).default(0).describe('Integral time, seconds; 0 = no integral action. Default 0.'),
    tdS: z
      .number()
      .min(0)
      .default(0)
      .describe('Derivative time, seconds; 0 = no derivative action. Default 0.'),
    derivativeFilterS: z
      .number()
      .gt(0)
      .optional()
      .describe(
        'Time constant of the derivative low-pass filter, seconds. Default tdS (bounds the effect of a sensor step on D to kp × step).',
      ),
    setpointWeight: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        'Weight b of the setpoint in the proportional term (b·r − y); < 1 softens setpoint steps. Default 1.',
      ),
    lower: z
      .strictObject({
        kp: z
          .number()
          .gt(0)
          .describe(
            "The lower side's proportional gain: output fraction (0..1) per unit of error. Required.",
          ),
        tiS: z
          .number()
          .min(0)
          .default(0)
          .describe("The lower side's integral time, seconds; 0 = none. Default 0."),
        tdS: z
          .number()
          .min(0)
          .default(0)
          .describe("The lower side's derivative time, seconds; 0 = none. Default 0."),
        setpointWeight: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .describe("The lower side's setpoint weight b, 0..1. Default: the controller's setpointWeight."),
      })
      .optional()
      .describe(
        "Split range (a raise and a lower actuator) only: the lower side's gains, for a cooler that is another plant than the heater (a fridge and a heat mat differ 10× in gain). The PID runs with them while the lower side acts; the switch is bumpless. Default: kp, tiS, tdS serve both sides.",
      ),
    model: z
      .strictObject({
        gain: z
          .number()
          .gt(0, {
            error:
              "must be above 0: the change at full output of the loop's signed output, where cooling is the negative side (a cooler that lowers the value by 15 °C at full power has gain 15)",
          })
          .describe(
            "Plant steady-state change per unit of the loop's signed output (loop unit), above 0: a heater that raises the value by 20 °C at full power has gain 20, and a cooler that lowers it by 15 °C has gain 15 (cooling is the output's negative side).",
          ),
        ambient: z.number().describe('Plant value with every output off (loop unit).'),
        deadTimeS: z
          .number()
          .min(0)
          .optional()
          .describe(
            "Plant dead time, seconds: how long the output's effect takes to show. Gives the feedforward's disturbance a lead, making up the heat lost meanwhile. Default 0 (no lead).",
          ),
      })
      .optional()
      .describe(
        'Plant model: output ≈ (setpoint − ambient) / gain holds the setpoint. Added as feedforward, its change with the setpoint is handed to the integral (steps respond as without it, no overshoot); with tiS 0 it removes the proportional offset; controller.feedforward acts through it. Default none.',
      ),
    feedforward: z
      .strictObject({
        sensor: z
          .string()
          .describe(
            "Sensor measuring the disturbance (outdoor or ambient temperature), in the loop's unit; not the loop's own sensor. Required.",
          ),
        coupling: z
          .number()
          .gt(0)
          .max(1)
          .default(1)
          .describe(
            "Share of the sensor's change that reaches the plant's ambient, 0..1: 1 when the plant settles at the sensor's value with every output off. Default 1.",
          ),
        plausible: rangeSchema('plausible disturbance reading')
          .optional()
          .describe("Readings outside it are ignored. Default: the quantity's plausible range."),
      })
      .optional()
      .describe(
        "Measured-disturbance feedforward through the model (needs model): output ≈ (setpoint − ambient′) / gain with ambient′ = ambient + coupling × (reading − ambient). A missing, stale (sensor's staleAfterS) or implausible reading falls back to the model's ambient, bumplessly. Default none.",
      ),
  })
  .describe(
    "PID controller; on a relay its output (0..1) is time-proportioned over windowS, or switched on a band (the relay's modulation).",
  );

export const hysteresisSchema = z
  .strictObject({
    type: z.literal('hysteresis').describe('Controller type: decides which other keys apply. Required.'),
    coldTolerance: z
      .number()
      .min(0)
      .default(0.3)
      .describe('Raise turns on below setpoint − coldTolerance (loop unit). Default 0.3.'),
    hotTolerance: z
      .number()
      .min(0)
      .default(0.3)
      .describe('Lower turns on above setpoint + hotTolerance (loop unit). Default 0.3.'),
  })
  .describe('On/off controller with tolerances, like Home Assistant generic_thermostat.');

export const controllerSchema = z.discriminatedUnion('type', [pidSchema, hysteresisSchema]);

type RawPid = z.output<typeof pidSchema>;
export type RawController = z.output<typeof controllerSchema>;

export type PidConfig = Omit<RawPid, 'derivativeFilterS'> & {
  /** Derivative filter time constant, s. Resolved: defaultDerivativeFilterS(tdS) when absent. */
  derivativeFilterS: number;
};
export type HysteresisConfig = z.output<typeof hysteresisSchema>;
export type ControllerConfig = PidConfig | HysteresisConfig;

/** A PID's derivative filter defaults to its tdS. */
export function resolveController(controller: RawController): ControllerConfig {
  if (controller.type !== 'pid') return controller;
  return {
    ...controller,
    derivativeFilterS: controller.derivativeFilterS ?? defaultDerivativeFilterS(controller.tdS),
  };
}
