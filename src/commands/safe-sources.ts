/**
 * Which actuators `homeostat safe` drives: from the config file, from the last applied config
 * (the safe manifest beside the database, src/safe/manifest.ts), or from both.
 *
 * - The file is valid: its actuators, plus every one the manifest has and the file does not.
 *   A daemon killed after the file was edited (a relay moved to another pin, or removed) was
 *   still driving the manifest's pins; releasing a relay is always safe, leaving one ON is not.
 *   A pin both name with different wiring (activeLow, safeState) follows the file, the newer
 *   intent, and the difference is reported.
 * - The file cannot be read, parsed or validated: the manifest's actuators (said so on stderr,
 *   with the manifest's generation and age), plus the relays an invalid file still names, as
 *   a best guess; on the same pin the manifest wins.
 * - No manifest either: the relays an invalid file still names (exit 1 even when all are
 *   driven: nothing says they are all); nothing readable at all: exit 1, "no pin driven".
 */
import { loadConfigFile } from '../config/load.js';
import type { GpioChipOverride } from '../drivers/gpio/chip.js';
import type { SafeRelay } from '../safe/gpio.js';
import { describeManifest, readSafeManifest } from '../safe/manifest.js';
import {
  planFromConfig,
  readBrokenPlan,
  type SafeBroker,
  type SafePlan,
  type SafePlug,
} from '../safe/plan.js';
import type { SafePwm } from '../safe/pwm.js';

/** Relays (and PWM outputs) that live under one sysfs root and chip. */
export interface RelayGroup {
  relays: SafeRelay[];
  pwms: SafePwm[];
  sysfsRoot: string;
  chip: GpioChipOverride;
}

/** What to drive, once both sources are read. */
export interface SafeTargets {
  /** One group, or two when the file and the manifest place GPIO differently. */
  groups: RelayGroup[];
  plugs: SafePlug[];
  broker?: SafeBroker;
  /** false: only a best guess from an invalid file (exit 1 whatever happens). */
  trusted: boolean;
}

export type SafeChoice = ({ ok: true } & SafeTargets) | { ok: false; error: string };

/** A plan and what to call it in the report. */
interface Named {
  name: string;
  plan: SafePlan;
}

/**
 * Reads the file and the manifest (`manifestPath` undefined: none, an in-memory database) and
 * says what to drive; `note` gets the lines for stderr (why a source was set aside, how they differ).
 */
export function chooseTargets(
  configPath: string,
  manifestPath: string | undefined,
  nowMs: number,
  note: (line: string) => void,
): SafeChoice {
  const loaded = loadConfigFile(configPath);
  const manifest = manifestPath
    ? readSafeManifest(manifestPath)
    : ({ ok: false, missing: true, reason: 'none (no database given)' } as const);
  const manifestName = `the last applied config ${manifestPath ?? '(none)'}`;
  if (loaded.ok) {
    const file = { name: configPath, plan: planFromConfig(loaded.config) };
    if (manifest.ok)
      return { ok: true, trusted: true, ...merge(file, { name: manifestName, plan: manifest.plan }, note) };
    if (!manifest.missing) note(`homeostat safe: ${manifestName} set aside: ${manifest.reason}`);
    return { ok: true, trusted: true, ...merge(file, undefined, note) };
  }
  const why = loaded.errors[0] ?? 'invalid';
  for (const line of loaded.errors.slice(0, 5)) note(`config: ${line}`);
  const guess = readBrokenPlan(configPath);
  const guessed = guess ? { name: `the relays ${configPath} still names`, plan: guess } : undefined;
  if (manifest.ok) {
    note(
      `homeostat safe: ${configPath} cannot be used (${why}); using ${manifestName} ` +
        `(${describeManifest(manifest.manifest, nowMs)})`,
    );
    return { ok: true, trusted: true, ...merge({ name: manifestName, plan: manifest.plan }, guessed, note) };
  }
  if (guessed) {
    note(
      `homeostat safe: config invalid; driving the ${guessed.plan.relays.length} gpio_relay actuator(s) ` +
        `it names (${manifestName}: ${manifest.reason})`,
    );
    return { ok: true, trusted: false, ...merge(guessed, undefined, note) };
  }
  return {
    ok: false,
    error:
      `homeostat safe: cannot read any actuator: ${configPath}: ${why}; ${manifestName}: ` +
      `${manifest.reason}: no pin driven`,
  };
}

const sameGpio = (a: SafePlan, b: SafePlan) =>
  a.sysfsRoot === b.sysfsRoot && a.chip.chipLabel === b.chip.chipLabel && a.chip.base === b.chip.base;

/** The union of two plans; `primary` wins where both name the same pin or topic. */
function merge(
  primary: Named,
  secondary: Named | undefined,
  note: (line: string) => void,
): Omit<SafeTargets, 'trusted'> {
  const { plan } = primary;
  const broker = plan.broker ?? secondary?.plan.broker;
  const base = { ...(broker ? { broker } : {}) };
  if (!secondary) {
    return { ...base, groups: [groupOf(plan, plan.relays, plan.pwms)], plugs: plan.mqtt };
  }
  const other = secondary.plan;
  const extraPlugs = other.mqtt.filter((p) => !plan.mqtt.some((q) => q.topic === p.topic));
  const plugs = [...plan.mqtt, ...extraPlugs];
  if (!sameGpio(plan, other)) {
    if (other.relays.length > 0) {
      note(
        `homeostat safe: ${primary.name} and ${secondary.name} place GPIO differently ` +
          `(sysfs root, chip): driving the relays of each where it says`,
      );
    }
    const groups = [groupOf(plan, plan.relays, plan.pwms), groupOf(other, other.relays, other.pwms)];
    return { ...base, groups, plugs };
  }
  const extra: SafeRelay[] = [];
  for (const relay of other.relays) {
    const same = plan.relays.find((r) => r.bcm === relay.bcm);
    if (!same) extra.push(relay);
    else if (same.activeLow !== relay.activeLow || same.safeLevel !== relay.safeLevel) {
      note(
        `homeostat safe: BCM ${relay.bcm} is wired differently in ${secondary.name} (${wiring(relay)}) ` +
          `than in ${primary.name} (${wiring(same)}); following ${primary.name}`,
      );
    }
  }
  const samePwm = (a: SafePwm, b: SafePwm) => a.chip === b.chip && a.channel === b.channel;
  const extraPwms = other.pwms.filter((p) => !plan.pwms.some((q) => samePwm(p, q)));
  if (extra.length + extraPwms.length + extraPlugs.length > 0) {
    const names = [
      ...extra.map((r) => `${r.id} (BCM ${r.bcm})`),
      ...extraPwms.map((p) => `${p.id} (pwmchip${p.chip}/pwm${p.channel})`),
      ...extraPlugs.map((p) => `${p.id} (${p.topic})`),
    ];
    note(`homeostat safe: also driving what only ${secondary.name} has: ${names.join(', ')}`);
  }
  return {
    ...base,
    groups: [groupOf(plan, [...plan.relays, ...extra], [...plan.pwms, ...extraPwms])],
    plugs,
  };
}

function groupOf(plan: SafePlan, relays: SafeRelay[], pwms: SafePwm[]): RelayGroup {
  return { relays, pwms, sysfsRoot: plan.sysfsRoot, chip: plan.chip };
}

function wiring(relay: SafeRelay): string {
  return `${relay.activeLow ? 'active-low' : 'active-high'}, safe ${relay.safeLevel === 1 ? 'ON' : 'OFF'}`;
}
