/**
 * Config keys renamed to follow the units-in-names rule, whose old names are still read: a file
 * written for an earlier homeostat keeps working unchanged, and loading it warns. The kinds
 * resolve the old key into the new one (kinds/fields.ts, kinds/sensors/gpio-input.ts); the config
 * checks that only one of them is given, warns of the old one (config/schema/renamed.ts) and
 * hashes loops under the old names, so a stored generation does not bump on upgrade.
 */

export interface RenamedKey {
  /** The sections whose kinds may have the key (only the kinds that declare it accept it). */
  section: 'sensors' | 'actuators';
  oldKey: string;
  newKey: string;
  /** The old key's value in the new key's unit. */
  toNew(oldValue: number): number;
  /** The new key's value in the old key's unit (loop hashes keep the old names and units). */
  toOld(newValue: number): number;
  /** How the value changes, for the warning ("same value", "in seconds"). */
  conversion: string;
}

/** `bandC` (actuators): the band is in the loop's unit (°C, %RH or generic), not always °C. */
export const BAND_RENAMED: RenamedKey = {
  section: 'actuators',
  oldKey: 'bandC',
  newKey: 'band',
  toNew: (band) => band,
  toOld: (band) => band,
  conversion: 'same value',
};

/** `debounceMs` (gpio_input): every other config duration is in seconds (`…S`). */
export const DEBOUNCE_RENAMED: RenamedKey = {
  section: 'sensors',
  oldKey: 'debounceMs',
  newKey: 'debounceS',
  toNew: (ms) => ms / 1000,
  // Rounded to a nanosecond: 0.007 s is 7 ms, not 7.000000000000001.
  toOld: (s) => Math.round(s * 1e9) / 1e6,
  conversion: 'in seconds',
};

/** In the order of the file's sections: sensors, then actuators. */
export const RENAMED_KEYS: readonly RenamedKey[] = [DEBOUNCE_RENAMED, BAND_RENAMED];
