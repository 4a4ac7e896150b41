/**
 * The cut-off's config part (core/monitors/cutoff.ts): `loops.<id>.cutoff`, an absolute limit
 * each side, checked against the loop's limits, plausible range and actuators.
 */
import { z } from 'zod';
import type { LoopMonitorConfig } from './types.js';

const schema = z
  .strictObject({
    max: z
      .number()
      .optional()
      .describe(
        'The loop never raises the value at or above this (loop unit): reached with the raise ' +
          'actuator on, every actuator goes safe at once and the fault latches. Must lie above ' +
          'limits.max. Default: none.',
      ),
    min: z
      .number()
      .optional()
      .describe(
        'The loop never lowers the value at or below this (loop unit): reached with the lower ' +
          'actuator on, every actuator goes safe at once and the fault latches. Must lie below ' +
          'limits.min. Default: none.',
      ),
  })
  .optional()
  .describe(
    'Absolute cut-off, independent of the setpoint and the controller (a fermenter 30 °C, a kettle ' +
      '105 °C, a freezer min -30 °C), like Marlin MAXTEMP. Latches only while an actuator that pushes ' +
      'further is on: beyond it with that actuator off (the sun, a hot cellar) is no fault of the ' +
      'loop, and a cooler keeps cooling. Reset: MQTT <loop>/fault/reset or the Home Assistant ' +
      'button. Default: off.',
  );

export const cutoffConfig = {
  scope: 'loop',
  key: 'cutoff',
  schema,
  check(cutoff, loop, issue) {
    if (cutoff.min === undefined && cutoff.max === undefined) issue([], 'give max, min or both');
    const { plausible } = loop;
    const tripsInside = 'a setpoint there would trip it';
    if (cutoff.max !== undefined) {
      const path = ['max'];
      if (loop.raise === undefined) issue(path, 'needs a raise actuator (nothing else pushes the value up)');
      if (cutoff.max <= loop.limits.max)
        issue(path, `must lie above limits.max (${loop.limits.max}): ${tripsInside}`);
      if (cutoff.max >= plausible.max) {
        issue(path, `must lie below plausible.max (${plausible.max}): readings above are sensor faults`);
      }
    }
    if (cutoff.min !== undefined) {
      const path = ['min'];
      if (loop.lower === undefined)
        issue(path, 'needs a lower actuator (nothing else pushes the value down)');
      if (cutoff.min >= loop.limits.min)
        issue(path, `must lie below limits.min (${loop.limits.min}): ${tripsInside}`);
      if (cutoff.min <= plausible.min) {
        issue(path, `must lie above plausible.min (${plausible.min}): readings below are sensor faults`);
      }
    }
  },
  spec: (cutoff) => ({ ...cutoff }),
} satisfies LoopMonitorConfig<'cutoff', typeof schema>;
