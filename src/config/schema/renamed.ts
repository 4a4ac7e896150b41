/**
 * Renamed keys whose old names are still read (src/kinds/renamed-keys.ts): the rule that only
 * one of the two names is given, the warnings for an old name, and the old names again for
 * loop hashes. The kinds themselves turn the old key into the new one when they resolve.
 */
import type { z } from 'zod';
import { RENAMED_KEYS, type RenamedKey } from '../../kinds/renamed-keys.js';
import type { RawConfig } from './file.js';

type Section = RenamedKey['section'];

/** Giving a key under both its names is an error naming both: which one was meant? */
export function checkRenamedKeys(config: RawConfig, ctx: z.RefinementCtx): void {
  for (const { section, id, item, rename } of renamedKeysIn(config)) {
    if (item[rename.newKey] === undefined) continue;
    ctx.addIssue({
      code: 'custom',
      path: [section, id, rename.oldKey],
      message:
        `both ${rename.oldKey} and ${rename.newKey} are set: ${rename.oldKey} is the deprecated name ` +
        `of ${rename.newKey}; keep only ${rename.newKey}`,
    });
  }
}

/**
 * One warning per old name in a valid file, as `[path, message]`:
 * `actuators.heater.bandC` → `renamed band (same value): write band: 0.4`.
 */
export function renamedKeyWarnings(data: unknown): Array<{ path: string[]; message: string }> {
  const warnings: Array<{ path: string[]; message: string }> = [];
  for (const { section, id, item, rename } of renamedKeysIn(data)) {
    const oldValue = item[rename.oldKey];
    const newValue = typeof oldValue === 'number' ? rename.toNew(oldValue) : oldValue;
    warnings.push({
      path: [section, id, rename.oldKey],
      message: `renamed ${rename.newKey} (${rename.conversion}): write ${rename.newKey}: ${String(newValue)}`,
    });
  }
  return warnings;
}

/**
 * A resolved sensor or actuator section with its renamed keys under their old names and units,
 * for loopSectionHash: the hash of an unchanged loop stays the one stored before the rename.
 */
export function withOldKeyNames(section: Section, value: unknown): unknown {
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> = value;
  for (const rename of RENAMED_KEYS) {
    const newValue = out[rename.newKey];
    if (rename.section !== section || typeof newValue !== 'number') continue;
    const { [rename.newKey]: _renamed, ...rest } = out;
    out = { ...rest, [rename.oldKey]: rename.toOld(newValue) };
  }
  return out;
}

/** Every sensor or actuator section that still uses an old name, with the rename. */
function* renamedKeysIn(
  config: unknown,
): Generator<{ section: Section; id: string; item: Record<string, unknown>; rename: RenamedKey }> {
  if (!isRecord(config)) return;
  for (const rename of RENAMED_KEYS) {
    const sections = config[rename.section];
    if (!isRecord(sections)) continue;
    for (const [id, item] of Object.entries(sections)) {
      if (isRecord(item) && item[rename.oldKey] !== undefined) {
        yield { section: rename.section, id, item, rename };
      }
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
