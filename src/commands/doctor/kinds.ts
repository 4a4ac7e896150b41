/** Doctor check 3: the kinds' own checks (1-Wire for ds18b20, the file of a file_value…). */
import type { Config } from '../../config/schema.js';
import { KIND_DOCTORS } from '../../kinds/registry.js';
import type { CheckResult } from '../../kinds/types.js';

/** What a kind's check may use; the clock is injectable for the DS18B20's rate limit. */
export interface KindCheckDeps {
  nowMs?: () => number;
}

/** Runs one kind's doctor check on the sections of that kind; its `whenAbsent` when there are none. */
async function runKindCheck(
  { kind, doctor }: (typeof KIND_DOCTORS)[number],
  config: Config,
  deps: KindCheckDeps,
): Promise<CheckResult[]> {
  const items = [...Object.entries(config.sensors), ...Object.entries(config.actuators)]
    .filter(([, section]) => section.kind === kind)
    .map(([id, section]) => ({ id, section }));
  if (items.length === 0) return doctor.whenAbsent ? [doctor.whenAbsent] : [];
  return doctor.check(items, { sysfsRoot: config.gpio.sysfsRoot, nowMs: deps.nowMs ?? Date.now });
}

/** Every kind's check that applies to this config, in registry order. */
export async function checkKinds(config: Config, deps: KindCheckDeps = {}): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const kind of KIND_DOCTORS) results.push(...(await runKindCheck(kind, config, deps)));
  return results;
}

/**
 * The 1-Wire bus (`<sysfsRoot>/bus/w1/devices`) and one fresh reading of each configured DS18B20
 * (by address, or the only one present). Skipped without ds18b20 sensors. The ds18b20 kind's
 * check (kinds/sensors/ds18b20-doctor.ts); part of {@link checkKinds}.
 */
export async function checkOneWire(config: Config, deps: KindCheckDeps = {}): Promise<CheckResult[]> {
  const oneWire = KIND_DOCTORS.find(({ kind }) => kind === 'ds18b20');
  return oneWire ? runKindCheck(oneWire, config, deps) : [];
}
