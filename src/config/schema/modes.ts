/** Which modes a loop can be put in, and which it starts in. */
import type { Mode, Quantity } from '../../core/types.js';

/** What the modes depend on: the quantity and which actuators the loop has. */
export interface LoopShape {
  quantity: Quantity;
  raise?: string | undefined;
  lower?: string | undefined;
}

/**
 * The modes a loop can be put in, from its quantity and which actuators it has:
 * temperature and generic: off, heat (raise), cool (lower), heat_cool (both);
 * humidity: off, humidify (raise), dehumidify (lower), auto (both).
 */
export function allowedModes(loop: LoopShape): Mode[] {
  const [up, down, both]: Mode[] =
    loop.quantity === 'humidity' ? ['humidify', 'dehumidify', 'auto'] : ['heat', 'cool', 'heat_cool'];
  const modes: Mode[] = ['off'];
  if (loop.raise !== undefined) modes.push(up!);
  if (loop.lower !== undefined) modes.push(down!);
  if (loop.raise !== undefined && loop.lower !== undefined) modes.push(both!);
  return modes;
}

/** The mode a loop starts in when the file gives none: the one that uses all its actuators. */
export function defaultMode(loop: LoopShape): Mode {
  return allowedModes(loop).at(-1)!;
}
