/**
 * `homeostat plan`: what applying a config would change, as a pure diff of two resolved
 * configs (every default filled, so writing out a default changes nothing).
 *
 * The walk is generic over the config's shape: objects are compared key by key, anything
 * else (numbers, strings, arrays) as a whole value. A key present on one side only becomes
 * a single add/remove line for its whole value, so a new loop, sensor, actuator or plant —
 * or a whole new `mqtt` section — is one line, not one per field.
 *
 * Also here: `loopSectionHash`, the fingerprint of everything one loop depends on, so the
 * store can bump only the generations of the loops a new config actually touches.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, isRecord } from '../kinds/canonical-json.js';
import { formatPath } from './load.js';
import { withOldKeyNames } from './schema/renamed.js';
import type { Config } from './schema.js';

export type PlanChange =
  | { op: 'add'; path: string; after: unknown }
  | { op: 'remove'; path: string; before: unknown }
  | { op: 'change'; path: string; before: unknown; after: unknown };

/** Top-level sections in the order a plan lists them; any other key follows, sorted. */
const SECTION_ORDER = [
  'loops',
  'sensors',
  'actuators',
  'simulation',
  'node',
  'mqtt',
  'gpio',
  'storage',
  'http',
];

/** Collections of things with ids; adding or removing one prints its noun, not its fields. */
const COLLECTIONS: ReadonlyArray<{ prefix: string; noun: string }> = [
  { prefix: 'loops', noun: 'loop' },
  { prefix: 'sensors', noun: 'sensor' },
  { prefix: 'actuators', noun: 'actuator' },
  { prefix: 'simulation.plants', noun: 'plant' },
];

/**
 * What "nothing applied yet" is compared as: empty collections, so every loop, sensor,
 * actuator and plant is its own add line, while node, gpio, storage (and mqtt) are one line each.
 * The version is the file format, not desired state: no line for it.
 */
const NOTHING_APPLIED: Record<string, unknown> = {
  version: 1,
  loops: {},
  sensors: {},
  actuators: {},
  simulation: { plants: {} },
};

/**
 * The changes that turn `current` into `next`, leaf by leaf: sections in SECTION_ORDER,
 * keys within a section sorted (so YAML key order never matters). `current` undefined
 * means nothing was applied yet. Identical configs give [].
 */
export function planChanges(current: Config | undefined, next: Config): PlanChange[] {
  const before = (current ?? NOTHING_APPLIED) as Record<string, unknown>;
  const after = next as unknown as Record<string, unknown>;
  const changes: PlanChange[] = [];
  for (const key of sectionKeys(before, after)) diff([key], before[key], after[key], changes);
  return changes;
}

/**
 * One line per change, Terraform-like:
 * `+ loops.greenhouse (loop added)`, `- loops.attic (loop removed)`,
 * `~ loops.room.setpoint 18 → 19`, `+ loops.room.lower "cooler"`.
 * Numbers print plainly, strings quoted, objects and arrays as compact JSON with sorted keys.
 * Lines are grouped by section in SECTION_ORDER; within a section the input order is kept.
 */
export function formatPlan(changes: PlanChange[]): string[] {
  return changes
    .map((change, index) => ({ change, index, rank: sectionRank(topSection(change.path)) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ change }) => formatChange(change));
}

/** `Plan: 1 to add, 2 to change, 1 to remove.`, or `No changes.` for an empty plan. */
export function summarizePlan(changes: PlanChange[]): string {
  if (changes.length === 0) return 'No changes.';
  const count = (op: PlanChange['op']) => changes.filter((c) => c.op === op).length;
  return `Plan: ${count('add')} to add, ${count('change')} to change, ${count('remove')} to remove.`;
}

/**
 * SHA-256 (hex) of the canonical JSON of everything that affects one loop: its resolved
 * section and the sections of its sensor and its raise/lower actuators. A changed actuator
 * `minOnS` thus changes the hash of the loop that uses it, and of no other loop. Simulated
 * plants are left out: they model the world, they are not the loop's desired state.
 * Renamed keys are hashed under their old names and units (`band` as `bandC`, `debounceS` as
 * `debounceMs`): the hash of an unchanged loop stays the one stored before the rename, so an
 * upgrade bumps no generation.
 * Throws on an unknown loop id (a caller bug: ids come from the same config).
 */
export function loopSectionHash(config: Config, loopId: string): string {
  const loop = own(config.loops, loopId);
  if (loop === undefined) throw new Error(`loopSectionHash: unknown loop "${loopId}"`);
  const section = {
    loop,
    // One sensor: hashed under `sensor` as before (an unchanged loop keeps its stored hash);
    // several: each one's section under `sensors`, in the loop's order.
    ...(loop.sensors === undefined
      ? { sensor: withOldKeyNames('sensors', own(config.sensors, loop.sensor ?? '')) }
      : { sensors: loop.sensors.map((id) => withOldKeyNames('sensors', own(config.sensors, id))) }),
    raise: loop.raise === undefined ? undefined : hashedActuator(own(config.actuators, loop.raise)),
    lower: loop.lower === undefined ? undefined : hashedActuator(own(config.actuators, loop.lower)),
  };
  return createHash('sha256').update(canonicalJson(section)).digest('hex');
}

/**
 * An actuator section as hashed: under its old key names, without `modulationDefaulted` (a
 * relay's note that its file chose no modulation, derived from what the file leaves out: hashing
 * it would change every relay loop's hash stored before it existed).
 */
function hashedActuator(actuator: Config['actuators'][string] | undefined): unknown {
  if (actuator === undefined || !('modulationDefaulted' in actuator)) {
    return withOldKeyNames('actuators', actuator);
  }
  const { modulationDefaulted: _derived, ...written } = actuator;
  return withOldKeyNames('actuators', written);
}

export { canonicalJson };

// ---------------------------------------------------------------------------------------
// Tunings

/** What plan needs of a loop's stored desired state (DesiredStore.allDesired's rows). */
export interface PlanTuningRow {
  loop: string;
  tuning?: { version: number; gains: PlanGains; lowerGains?: PlanGains };
  lastTuningVersion?: number;
}

interface PlanGains {
  kp: number;
  tiS: number;
  tdS: number;
  /** A split-range loop's lower side (the file's `controller.lower`, a tuning's `lowerGains`). */
  lower?: PlanGains;
}

/**
 * The gains each PID loop of `next` will regulate with once applied, one line per loop:
 * the file's (`config`) or a stored tuning's (`version N`), and a newer stored version not
 * applied (a proposal). A tuning in force gives way when the file changes the loop's kp, tiS
 * or tdS since `current` (the store's rule, desired-store.ts): said so, with both gains.
 * Not changes of the file: informational lines for `homeostat plan` after its diff.
 */
export function planTunings(
  current: Config | undefined,
  next: Config,
  rows: readonly PlanTuningRow[],
): string[] {
  const stored = new Map(rows.map((row) => [row.loop, row]));
  const lines: string[] = [];
  for (const id of Object.keys(next.loops).sort()) {
    const fileGains = pidGains(next, id);
    if (fileGains === undefined) continue;
    const row = stored.get(id);
    const tuning = row?.tuning;
    const before = current === undefined ? undefined : pidGains(current, id);
    const setAside = tuning !== undefined && before !== undefined && !sameGains(before, fileGains);
    let line: string;
    if (tuning === undefined) line = `tuning ${id}: config (${formatGains(fileGains)})`;
    else if (setAside)
      line =
        `tuning ${id}: config (${formatGains(fileGains)}): the file changes the gains, so version ` +
        `${tuning.version} (${formatGains(tuningGains(tuning))}) is set aside`;
    else
      line = `tuning ${id}: version ${tuning.version} (${formatGains(tuningGains(tuning))}), not the file's`;
    const latest = row?.lastTuningVersion;
    if (latest !== undefined && latest !== tuning?.version)
      line += `; version ${latest} proposed, not applied (homeostat tuning ${id} latest)`;
    lines.push(line);
  }
  return lines;
}

function pidGains(config: Config, id: string): PlanGains | undefined {
  const controller = own(config.loops, id)?.controller;
  return controller?.type === 'pid' ? fileGains(controller) : undefined;
}

/** A PID's gains as written in the file, with its lower side's (controller.lower) when it has one. */
export function fileGains(controller: {
  kp: number;
  tiS: number;
  tdS: number;
  lower?: { kp: number; tiS: number; tdS: number } | undefined;
}): PlanGains {
  const { kp, tiS, tdS, lower } = controller;
  return {
    kp,
    tiS,
    tdS,
    ...(lower === undefined ? {} : { lower: { kp: lower.kp, tiS: lower.tiS, tdS: lower.tdS } }),
  };
}

function tuningGains(tuning: NonNullable<PlanTuningRow['tuning']>): PlanGains {
  return tuning.lowerGains === undefined ? tuning.gains : { ...tuning.gains, lower: tuning.lowerGains };
}

function sameGains(a: PlanGains, b: PlanGains): boolean {
  const same = (x: PlanGains, y: PlanGains) => x.kp === y.kp && x.tiS === y.tiS && x.tdS === y.tdS;
  if (a.lower === undefined || b.lower === undefined) return same(a, b) && a.lower === b.lower;
  return same(a, b) && same(a.lower, b.lower);
}

function formatGains(gains: PlanGains): string {
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const one = ({ kp, tiS, tdS }: PlanGains) => `kp ${round(kp)}, tiS ${round(tiS)} s, tdS ${round(tdS)} s`;
  return gains.lower === undefined ? one(gains) : `raise ${one(gains)}; lower ${one(gains.lower)}`;
}

// ---------------------------------------------------------------------------------------
// Diff

function diff(path: string[], before: unknown, after: unknown, out: PlanChange[]): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined) {
    out.push({ op: 'add', path: formatPath(path), after });
  } else if (after === undefined) {
    out.push({ op: 'remove', path: formatPath(path), before });
  } else if (isRecord(before) && isRecord(after)) {
    for (const key of sortedKeys(before, after)) diff([...path, key], before[key], after[key], out);
  } else if (canonicalJson(before) !== canonicalJson(after)) {
    out.push({ op: 'change', path: formatPath(path), before, after });
  }
}

function sectionKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return sortedKeys(before, after).sort((a, b) => sectionRank(a) - sectionRank(b));
}

/** Keys of both objects, sorted by code unit (not locale: the order must not depend on the host). */
function sortedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

function sectionRank(section: string): number {
  const rank = SECTION_ORDER.indexOf(section);
  return rank === -1 ? SECTION_ORDER.length : rank;
}

// ---------------------------------------------------------------------------------------
// Formatting

function formatChange(change: PlanChange): string {
  const noun = collectionNoun(change.path);
  switch (change.op) {
    case 'add':
      return `+ ${change.path} ${noun === undefined ? formatValue(change.after) : `(${noun} added)`}`;
    case 'remove':
      return `- ${change.path} ${noun === undefined ? formatValue(change.before) : `(${noun} removed)`}`;
    case 'change':
      return `~ ${change.path} ${formatValue(change.before)} → ${formatValue(change.after)}`;
  }
}

/** `loop` for `loops.attic`, `plant` for `simulation.plants.room`; undefined for deeper paths. */
function collectionNoun(path: string): string | undefined {
  for (const { prefix, noun } of COLLECTIONS) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    // One more segment, plain (`.room`) or quoted (`["odd id"]`) as formatPath writes it.
    if (/^\.[^.[]+$/.test(rest) || /^\["(?:[^"\\]|\\.)*"\]$/.test(rest)) return noun;
  }
  return undefined;
}

function topSection(path: string): string {
  return /^[^.[]*/.exec(path)?.[0] ?? path;
}

function formatValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  return canonicalJson(value);
}

// ---------------------------------------------------------------------------------------
// Helpers

/** `record[key]` for own keys only, so an id like "constructor" never finds a prototype member. */
function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
