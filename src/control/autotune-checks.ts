import type { LoopConfig } from '../config/schema.js';
import type { Direction, Mode } from '../core/types.js';
import type { AutotuneChange } from './commands.js';

/**
 * Whether a loop can take an autotune or tuning command now, answered before anything is
 * stored so that the sender learns at once what to change (the loop re-checks when it starts
 * the run: a sensor fault or a run already going are only known there). The same rules as the
 * core's startAutotune (core/tuning/autotune.ts), worded for the person who pressed the button.
 *
 * Pure.
 */

/** Why `change` cannot run on `loop` in desired mode `mode`; undefined when it can. */
export function autotuneRefusal(loop: LoopConfig, mode: Mode, change: AutotuneChange): string | undefined {
  // A cancel only ever makes the loop safer: nothing to check.
  if (change.action === 'cancel') return undefined;
  const controller = controllerRefusal(loop, 'autotune needs a pid controller');
  if (controller) return controller;
  if (mode === 'off') return 'the loop is off: set the mode it should regulate in, then start the autotune';
  const side = change.side ?? modeSide(mode);
  if (side === undefined) {
    return `mode ${mode} has two sides: say which one to tune (side "raise" or "lower")`;
  }
  if (loop[side] === undefined) {
    return `the loop has no actuator to ${side} the value (side "${side}"): ${availableSides(loop)}`;
  }
  if (!sideActs(mode, side)) {
    return `mode ${mode} does not let the ${side} side act: switch the mode, or tune side "${modeSide(mode)}"`;
  }
  return undefined;
}

/** Why `loop` takes no tuning (its gains are a PID's); undefined when it does. */
export function tuningRefusal(loop: LoopConfig): string | undefined {
  return controllerRefusal(loop, 'tunings are pid gains');
}

function controllerRefusal(loop: LoopConfig, what: string): string | undefined {
  const type = loop.controller.type;
  return type === 'pid'
    ? undefined
    : `${what}: this loop's controller is ${type}, which has no gains to tune`;
}

/** The side a one-sided mode acts with; undefined for heat_cool and auto (and off). */
function modeSide(mode: Mode): Direction | undefined {
  if (mode === 'heat' || mode === 'humidify') return 'raise';
  if (mode === 'cool' || mode === 'dehumidify') return 'lower';
  return undefined;
}

function sideActs(mode: Mode, side: Direction): boolean {
  return mode === 'heat_cool' || mode === 'auto' || modeSide(mode) === side;
}

function availableSides(loop: LoopConfig): string {
  const sides = (['raise', 'lower'] as const).filter((side) => loop[side] !== undefined);
  return `it has ${sides.map((side) => `"${side}"`).join(' and ')}`;
}
