import { MAX_HALF_BAND } from '../duty-band.js';
import type { ActuatorSpec } from '../loop-spec.js';
import type { Direction } from '../types.js';
import { BUDGET_WINDOW_S, type ModulationSuggestion } from './modulation.js';

/**
 * A relay's modulation from its loop's tuning ("derive the relay modulation and window
 * from the identified dynamics"), pure. The autotune suggests a time-proportioning window from
 * the identified model (core/tuning/modulation.ts: measured better than the duty band on all five
 * benchmark plants at the same switching budget); a relay whose file chose no modulation (neither
 * `modulation` nor `windowS`: the default band, made for a loop without a model) takes it while
 * that tuning is in force. A file that chose its modulation keeps it: a person's choice wins, as
 * the file's model wins over an identified one.
 */

/** Longest window taken from a stored suggestion, s: beyond it a stored value is not one the autotune makes. */
const MAX_SUGGESTED_WINDOW_S = 3600;

/**
 * The suggestion a tuning's details carry for `side`, checked (details are stored JSON: a damaged
 * or foreign value is ignored, never applied). A tuning carries `modulation` for the side it was
 * run on (`details.side`), and `modulationBySide` when it keeps both sides of a split-range loop.
 */
export function modulationSuggestionFor(details: unknown, side: Direction): ModulationSuggestion | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const record = details as { side?: unknown; modulation?: unknown; modulationBySide?: unknown };
  const bySide = record.modulationBySide as Partial<Record<Direction, unknown>> | undefined;
  const candidate =
    typeof bySide === 'object' && bySide !== null && bySide[side] !== undefined
      ? bySide[side]
      : record.side === side
        ? record.modulation
        : undefined;
  return checkedSuggestion(candidate);
}

function checkedSuggestion(value: unknown): ModulationSuggestion | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const s = value as Partial<ModulationSuggestion>;
  const windowOk =
    typeof s.windowS === 'number' &&
    Number.isFinite(s.windowS) &&
    s.windowS >= BUDGET_WINDOW_S &&
    s.windowS <= MAX_SUGGESTED_WINDOW_S;
  const bandOk = typeof s.halfBandDuty === 'number' && s.halfBandDuty > 0 && s.halfBandDuty < 0.5;
  if (s.recommended === 'window' && windowOk) return s as ModulationSuggestion;
  if (s.recommended === 'band' && bandOk) return s as ModulationSuggestion;
  return undefined;
}

/**
 * `actuator` modulated as the suggestion says, when it is a relay whose file left the modulation
 * to the default; otherwise unchanged. Minimum on/off times stay the file's.
 */
export function tunedRelayModulation(
  actuator: ActuatorSpec,
  suggestion: ModulationSuggestion | undefined,
): ActuatorSpec {
  if (suggestion === undefined || actuator.kind !== 'relay' || actuator.modulationDefaulted !== true) {
    return actuator;
  }
  if (suggestion.recommended === 'band') {
    // Capped as every band is (duty-band.ts): a stored 0.495 must not leave the relay no room.
    return { ...actuator, band: { halfBand: Math.min(suggestion.halfBandDuty, MAX_HALF_BAND) } };
  }
  const { band: _band, ...windowed } = actuator;
  const timing = actuator.timeProportioning ?? { windowMs: 0, minOnMs: 0, minOffMs: 0 };
  return { ...windowed, timeProportioning: { ...timing, windowMs: suggestion.windowS * 1000 } };
}
