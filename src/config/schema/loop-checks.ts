/**
 * A loop's own rules, run per loop so they are reported even when other sections fail. Paths
 * are relative to the loop; load.ts turns them into `loops.<id>.a.b: message`.
 */
import type { z } from 'zod';
import { checkPlausible } from '../../kinds/fields.js';
import { LOOP_MONITORS } from '../../kinds/monitors/registry.js';
import type { MonitorIssue, MonitorLoop } from '../../kinds/monitors/types.js';
import { defaultPlausible, TEMPERATURE_UNITS } from './common.js';
import type { RawLoop } from './loop.js';
import { allowedModes } from './modes.js';
import { sensorKeyIssues } from './sensor-set.js';

/** A loop's own rules (run per loop, so they are reported even when other sections fail). */
export function checkLoop(loop: RawLoop, ctx: z.RefinementCtx): void {
  const limitsOk = loop.limits.min < loop.limits.max;
  if (!limitsOk) {
    ctx.addIssue({ code: 'custom', path: ['limits', 'min'], message: 'must be less than limits.max' });
  } else if (loop.setpoint < loop.limits.min || loop.setpoint > loop.limits.max) {
    ctx.addIssue({
      code: 'custom',
      path: ['setpoint'],
      message: `${loop.setpoint} is outside limits ${loop.limits.min}..${loop.limits.max}`,
    });
  }
  checkPlausible(loop, ctx);
  checkUnit(loop, ctx);
  for (const { path, message } of sensorKeyIssues(loop)) ctx.addIssue({ code: 'custom', path, message });
  checkLoopMonitors(loop, ctx);
  checkFeedforward(loop, ctx);
  checkAutotune(loop, ctx);
  checkLowerGains(loop, ctx);
  if (loop.raise === undefined && loop.lower === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'needs a raise or a lower actuator (or both)' });
  } else if (loop.mode !== undefined) {
    const allowed = allowedModes(loop);
    if (!allowed.includes(loop.mode)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message: `mode "${loop.mode}" is not allowed for this loop (allowed: ${allowed.join(', ')})`,
      });
    }
  }
}

/**
 * A temperature loop is shown in Home Assistant's climate entity, which knows °C and °F only
 * (a K loop was shown as 293 °C); a humidity loop is relative humidity, in %. Other units are
 * a generic loop's, whose values are shown as they are.
 */
function checkUnit(loop: RawLoop, ctx: z.RefinementCtx): void {
  const unit = loop.unit;
  if (unit === undefined) return;
  if (loop.quantity === 'temperature' && !(TEMPERATURE_UNITS as readonly string[]).includes(unit)) {
    ctx.addIssue({
      code: 'custom',
      path: ['unit'],
      message:
        `"${unit}" is not a temperature unit homeostat can show in Home Assistant's climate entity ` +
        `(°C or °F); for kelvin or another scale use quantity: generic with unit: ${unit}`,
    });
  }
  if (loop.quantity === 'humidity' && unit !== '%') {
    ctx.addIssue({
      code: 'custom',
      path: ['unit'],
      message: "a humidity loop's unit is % (relative humidity); for another measure use quantity: generic",
    });
  }
}

/** An autotune computes PID gains: a hysteresis controller has none to give them to. */
function checkAutotune(loop: RawLoop, ctx: z.RefinementCtx): void {
  if (loop.autotune === undefined || loop.controller.type === 'pid') return;
  ctx.addIssue({
    code: 'custom',
    path: ['autotune'],
    message: 'needs controller type pid (an autotune computes PID gains; hysteresis has none)',
  });
}

/** The lower side's own gains need a lower side, and a raise side whose gains are the others. */
function checkLowerGains(loop: RawLoop, ctx: z.RefinementCtx): void {
  if (loop.controller.type !== 'pid' || loop.controller.lower === undefined) return;
  if (loop.raise !== undefined && loop.lower !== undefined) return;
  ctx.addIssue({
    code: 'custom',
    path: ['controller', 'lower'],
    message:
      "needs both a raise and a lower actuator (split range): the lower side's own gains; with one actuator, kp, tiS and tdS are its gains",
  });
}

/** A measured-disturbance feedforward acts through the plant model: it needs one, with a gain. */
function checkFeedforward(loop: RawLoop, ctx: z.RefinementCtx): void {
  const controller = loop.controller;
  if (controller.type !== 'pid' || !controller.feedforward) return;
  const path = ['controller', 'feedforward'];
  if (!controller.model) {
    ctx.addIssue({
      code: 'custom',
      path,
      message: 'needs controller.model (gain and ambient): the disturbance acts through it',
    });
  }
  const plausible = controller.feedforward.plausible;
  if (plausible && !(plausible.min < plausible.max)) {
    ctx.addIssue({
      code: 'custom',
      path: [...path, 'plausible', 'min'],
      message: 'must be less than plausible.max',
    });
  }
}

/** A loop's safety monitors: each configured one's own rules (kinds/monitors/), at its block's path. */
function checkLoopMonitors(loop: RawLoop, ctx: z.RefinementCtx): void {
  const context = {
    quantity: loop.quantity,
    raise: loop.raise,
    lower: loop.lower,
    limits: loop.limits,
    plausible: loop.plausible ?? defaultPlausible(loop.quantity, loop.unit),
  };
  for (const monitor of LOOP_MONITORS) {
    const block = loop[monitor.key];
    if (block === undefined) continue;
    const issue = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', path: [monitor.key, ...path], message });
    (monitor.check as (block: unknown, loop: MonitorLoop, issue: MonitorIssue) => void)(
      block,
      context,
      issue,
    );
  }
}
