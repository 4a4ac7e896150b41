/**
 * The manual base: what a person (or HA, MQTT, the API, the CLI) chose last, and the two
 * changes that make it. Whatever the source, a change is the same data, so the override rule
 * (effective.ts) is one rule for every source.
 */
import type { Mode } from '../types.js';
import type { ManualBase, Presets, SetpointSource } from './types.js';

export interface ManualValue {
  setpoint: number;
  mode: Mode;
  source: Extract<SetpointSource, 'manual' | 'preset'>;
  preset: string | null;
}

/**
 * The base's value. A selected preset gives its current setpoint and mode (editing a preset in
 * the config applies at once); a preset that no longer exists falls back to the stored setpoint.
 * A setpoint that is not finite turns the loop off: there is nothing safe to regulate to.
 */
export function manualValue(base: ManualBase, presets: Presets | undefined): ManualValue {
  const name = base.preset ?? null;
  const preset = name !== null && presets && Object.hasOwn(presets, name) ? presets[name] : undefined;
  if (preset && Number.isFinite(preset.setpoint)) {
    return { setpoint: preset.setpoint, mode: preset.mode ?? base.mode, source: 'preset', preset: name };
  }
  if (!Number.isFinite(base.setpoint)) {
    return { setpoint: base.setpoint, mode: 'off', source: 'manual', preset: null };
  }
  return { setpoint: base.setpoint, mode: base.mode, source: 'manual', preset: null };
}

/** A manual setpoint change: it leaves the preset (shown as none), as HA users expect. */
export function withManualSetpoint(base: ManualBase, setpoint: number, nowMs: number): ManualBase {
  return { ...base, setpoint, preset: null, changedAtMs: nowMs };
}

/**
 * A preset selected by hand: the stored setpoint (and mode, if the preset has one) become the
 * preset's, so the base stays meaningful if the preset is later removed. An unknown name is
 * refused with a message, never thrown.
 */
export function withPresetSelected(
  base: ManualBase,
  name: string,
  presets: Presets | undefined,
  nowMs: number,
): ManualBase | { error: string } {
  const preset = presets && Object.hasOwn(presets, name) ? presets[name] : undefined;
  if (!preset) {
    const known = Object.keys(presets ?? {});
    return { error: `unknown preset "${name}" (known: ${known.length > 0 ? known.join(', ') : 'none'})` };
  }
  return {
    ...base,
    setpoint: preset.setpoint,
    mode: preset.mode ?? base.mode,
    preset: name,
    changedAtMs: nowMs,
  };
}
