/**
 * What the runaway and the stuck watch configure alike: a period in seconds, and a distance (loop
 * unit) that defaults per quantity, so a generic loop, with no default unit, must give its own.
 */
import { z } from 'zod';
import type { Quantity } from '../../core/types.js';
import type { MonitorIssue, MonitorLoop } from './types.js';

/** How long a watch waits, seconds: 1800 unless given. */
export const periodField = (description: string) => z.number().gt(0).default(1800).describe(description);

/** A distance (loop unit); absent, its quantity's default. */
export const distanceField = (description: string) => z.number().gt(0).optional().describe(description);

/** The distance's rule: a generic loop has no default unit to take it from. */
export function checkDistance(
  distance: number | undefined,
  key: string,
  loop: MonitorLoop,
  issue: MonitorIssue,
): void {
  if (loop.quantity === 'generic' && distance === undefined) {
    issue([key], 'required for a generic loop (no default unit)');
  }
}

/**
 * The distance given, else its quantity's default. checkDistance guarantees the generic loop's
 * value; NaN only keeps the types honest (never trips).
 */
export const distanceOrDefault = (
  distance: number | undefined,
  defaults: Partial<Record<Quantity, number>>,
  quantity: Quantity,
): number => distance ?? defaults[quantity] ?? Number.NaN;
