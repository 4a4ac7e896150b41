/**
 * The safe manifest: what `homeostat safe` needs from the LAST CONFIG THE DAEMON APPLIED, kept
 * beside the database as `<db>.safe.json` (`/var/lib/homeostat/homeostat.db.safe.json` under
 * systemd), so that the last line of defence does not depend on the file a person is editing.
 * A config edited into a YAML typo, or moved away, while the daemon ran (or after it was
 * killed) used to leave `safe` with no pin to drive: heater and cooler stayed ON.
 *
 * A small versioned JSON document, readable without SQLite: every GPIO relay (BCM number,
 * active level, safe level), where GPIO lives (sysfs root, chip label or base), every MQTT
 * actuator's safe command (topic, payload) and the broker block as the config names it. No
 * secret is written: a password file is kept as its path (read when `safe` runs), a password
 * written inline in `mqtt.url` is replaced by `***` (as in the database's copy of the config).
 *
 * The daemon writes it at start (before the first cycle, then with the generation once the
 * database took the config) and after each reload, durably (temp, fsync, rename, fsync the
 * directory: a power cut leaves the old manifest or the new one, never a torn one), and only
 * when its content changed. Writing it can fail (a full disk): that is logged once per streak
 * at warn and never stops regulation.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { readConfigText } from '../config/load.js';
import { mqttSchema, resolveMqtt } from '../config/schema/mqtt.js';
import { nodeSchema } from '../config/schema/node.js';
import type { Config } from '../config/schema.js';
import { writeFileDurably } from '../durable-file.js';
import { redactUrl } from '../redact.js';
import { planFromConfig, type SafePlan } from './plan.js';

/** The `format` field: a file that is not a manifest is never mistaken for one. */
export const SAFE_MANIFEST_FORMAT = 'homeostat-safe-manifest';
/** Bumped when a field's meaning changes; a reader refuses versions it does not know. */
export const SAFE_MANIFEST_VERSION = 1;
/** A manifest of a thousand actuators is ~200 kB; anything much larger is not ours. */
const MAX_MANIFEST_BYTES = 1_048_576;

/** The manifest beside database `dbPath`; undefined for an in-memory database. */
export function safeManifestPath(dbPath: string): string | undefined {
  if (dbPath === '' || dbPath === ':memory:' || dbPath.startsWith('file:')) return undefined;
  return `${dbPath}.safe.json`;
}

/**
 * Where the manifest of the daemon on `dbPath` is, first choice first: beside that database,
 * then beside the default one in systemd's state directory (`$STATE_DIRECTORY`) when that is
 * another place. None for an in-memory database.
 */
export function safeManifestCandidates(dbPath: string, env: NodeJS.ProcessEnv): string[] {
  const primary = safeManifestPath(dbPath);
  if (primary === undefined) return [];
  const stateDir = env.STATE_DIRECTORY?.split(':')[0];
  const copy = stateDir ? safeManifestPath(join(stateDir, 'homeostat.db')) : undefined;
  return copy === undefined || resolve(copy) === resolve(primary) ? [primary] : [primary, copy];
}

const relaySchema = z.object({
  id: z.string().min(1),
  bcm: z.number().int().min(0),
  activeLow: z.boolean(),
  safeLevel: z.union([z.literal(0), z.literal(1)]),
});
const plugSchema = z.object({
  id: z.string().min(1),
  kind: z.string().min(1),
  topic: z.string().min(1),
  payload: z.string(),
  deadMan: z.string(),
});
const pwmSchema = z.object({
  id: z.string().min(1),
  chip: z.number().int().min(0),
  channel: z.number().int().min(0),
  safeLevel: z.number().min(0).max(1),
  periodNs: z.number().int().gt(0).optional(),
  polarity: z.enum(['normal', 'inversed']).optional(),
});
const manifestSchema = z.object({
  format: z.literal(SAFE_MANIFEST_FORMAT),
  version: z.literal(SAFE_MANIFEST_VERSION),
  writtenAt: z.iso.datetime(),
  /** The database's generation of that config; absent before the database took it. */
  generation: z.number().int().min(0).optional(),
  /** The file the daemon read it from, for the report. */
  configPath: z.string().optional(),
  gpio: z.object({
    sysfsRoot: z.string().min(1),
    chipLabel: z.string().min(1).optional(),
    base: z.number().int().min(0).optional(),
  }),
  relays: z.array(relaySchema),
  /** Absent in manifests written before the pwm kind: none. */
  pwms: z.array(pwmSchema).default([]),
  plugs: z.array(plugSchema),
  broker: z.object({ node: nodeSchema, mqtt: mqttSchema }).optional(),
});

/** The manifest as written and read. */
export type SafeManifest = z.output<typeof manifestSchema>;

/** The manifest of `config` (the writtenAt stamp is `nowMs`). */
export function buildSafeManifest(
  config: Config,
  meta: { nowMs: number; generation?: number | undefined; configPath?: string | undefined },
): SafeManifest {
  const plan = planFromConfig(config);
  return {
    format: SAFE_MANIFEST_FORMAT,
    version: SAFE_MANIFEST_VERSION,
    writtenAt: new Date(meta.nowMs).toISOString(),
    ...(meta.generation === undefined ? {} : { generation: meta.generation }),
    ...(meta.configPath === undefined ? {} : { configPath: meta.configPath }),
    gpio: {
      sysfsRoot: plan.sysfsRoot,
      ...(plan.chip.chipLabel === undefined ? {} : { chipLabel: plan.chip.chipLabel }),
      ...(plan.chip.base === undefined ? {} : { base: plan.chip.base }),
    },
    relays: plan.relays,
    pwms: plan.pwms,
    plugs: plan.mqtt,
    ...(plan.broker
      ? {
          broker: {
            node: plan.broker.node,
            mqtt: { ...plan.broker.mqtt, url: redactUrl(plan.broker.mqtt.url) },
          },
        }
      : {}),
  };
}

/** What `safe` drives from a manifest. */
export function planFromManifest(manifest: SafeManifest): SafePlan {
  const { gpio, broker } = manifest;
  return {
    relays: manifest.relays,
    pwms: manifest.pwms,
    sysfsRoot: gpio.sysfsRoot,
    chip: { chipLabel: gpio.chipLabel, base: gpio.base },
    mqtt: manifest.plugs,
    ...(broker
      ? {
          broker: {
            node: { ...broker.node, name: broker.node.name ?? broker.node.id },
            mqtt: resolveMqtt(broker.mqtt, broker.node.id),
          },
        }
      : {}),
  };
}

export type ManifestRead =
  | { ok: true; manifest: SafeManifest; plan: SafePlan }
  | { ok: false; missing: boolean; reason: string };

/**
 * Reads and checks the manifest at `path`, without blocking on a FIFO and with a size cap (the
 * config file's own reader). Never throws.
 */
export function readSafeManifest(path: string): ManifestRead {
  if (!existsSync(path)) {
    return { ok: false, missing: true, reason: 'not found (the daemon writes it when it applies a config)' };
  }
  const read = readConfigText(path, MAX_MANIFEST_BYTES);
  // The reader's messages speak of a config file: this one is the manifest.
  if (!read.ok) return { ok: false, missing: false, reason: read.error.replaceAll('config file', 'file') };
  let data: unknown;
  try {
    data = JSON.parse(read.text);
  } catch (error) {
    return { ok: false, missing: false, reason: `not JSON (${(error as Error).message})` };
  }
  const head = data as { format?: unknown; version?: unknown } | null;
  if (head?.format === SAFE_MANIFEST_FORMAT && typeof head.version === 'number') {
    if (head.version !== SAFE_MANIFEST_VERSION) {
      return {
        ok: false,
        missing: false,
        reason: `format version ${head.version}, this homeostat reads version ${SAFE_MANIFEST_VERSION} (written by another release?)`,
      };
    }
  }
  const parsed = manifestSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    return {
      ok: false,
      missing: false,
      reason: `not a safe manifest (${where}${issue?.message ?? 'invalid'})`,
    };
  }
  return { ok: true, manifest: parsed.data, plan: planFromManifest(parsed.data) };
}

/** `generation 7, written 2026-12-02T04:00:00.000Z (3 h 12 min ago)`. */
export function describeManifest(manifest: SafeManifest, nowMs: number): string {
  const ageS = Math.max(0, Math.round((nowMs - Date.parse(manifest.writtenAt)) / 1000));
  const age =
    ageS < 120
      ? `${ageS} s`
      : ageS < 7200
        ? `${Math.round(ageS / 60)} min`
        : `${Math.floor(ageS / 3600)} h ${Math.round((ageS % 3600) / 60)} min`;
  const generation =
    manifest.generation === undefined ? 'generation not yet stored' : `generation ${manifest.generation}`;
  return `${generation}, written ${manifest.writtenAt} (${age} ago)`;
}

/**
 * The daemon's side: writes the manifest of each config it applies. Never throws; a failure is
 * logged at warn once per streak of failures (and its end at info), and an unchanged manifest
 * is not written again (an SD card is spared a write per no-op reload).
 */
export class SafeManifestWriter {
  /** The last content written (without its writtenAt stamp). */
  private written: string | undefined;
  private failing = false;
  private swept = false;

  constructor(
    private readonly opts: {
      /** Beside the database first; see {@link SafeManifestWriter.beside} for the copy. */
      paths: readonly string[];
      logger: Pick<Logger, 'warn' | 'info'>;
      configPath?: string | undefined;
      nowMs?: () => number;
    },
  ) {}

  /**
   * The writer for the daemon on database `dbPath`; undefined for an in-memory database. A
   * database placed elsewhere by the config's `storage.path` gets a copy in systemd's state
   * directory too: `safe` finds the database through that same config, which may be the file
   * that no longer parses (see {@link safeManifestCandidates}).
   */
  static beside(
    dbPath: string,
    configPath: string,
    logger: Pick<Logger, 'warn' | 'info'>,
    env: NodeJS.ProcessEnv = process.env,
  ): SafeManifestWriter | undefined {
    const paths = safeManifestCandidates(dbPath, env);
    return paths.length === 0 ? undefined : new SafeManifestWriter({ paths, logger, configPath });
  }

  /**
   * Records `config` as the one in force; `generation` (read here, where a database error
   * cannot escape) once the database took it.
   */
  write(config: Config, generation?: () => number | undefined): void {
    const { paths, logger, configPath } = this.opts;
    let path = paths[0];
    try {
      const nowMs = (this.opts.nowMs ?? Date.now)();
      const manifest = buildSafeManifest(config, {
        nowMs,
        generation: readGeneration(generation),
        configPath,
      });
      const content = JSON.stringify({ ...manifest, writtenAt: undefined });
      if (content === this.written) return;
      if (!this.swept) sweepTemporaries(paths);
      this.swept = true;
      for (path of paths) writeFileDurably(path, `${JSON.stringify(manifest, null, 2)}\n`);
      this.written = content;
      if (this.failing) logger.info(`safe manifest ${paths.join(' and ')} written again`);
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        logger.warn(
          { err: error },
          `cannot write the safe manifest ${path} (${(error as Error).message}): regulation goes on; ` +
            '`homeostat safe` then knows only the config file and the last manifest written',
        );
      }
      this.failing = true;
    }
  }
}

/**
 * Removes the temporary files of writes a kill interrupted (`.<name>.tmp-<pid>`, see
 * durable-file.ts): each killed daemon would otherwise leave one behind for good. Best effort.
 */
function sweepTemporaries(paths: readonly string[]): void {
  for (const path of paths) {
    const prefix = `.${basename(path)}.tmp-`;
    try {
      for (const name of readdirSync(dirname(path))) {
        if (name.startsWith(prefix) && name !== `${prefix}${process.pid}`) {
          rmSync(join(dirname(path), name), { force: true });
        }
      }
    } catch {
      // A directory that cannot be listed fails the write itself, which says so.
    }
  }
}

function readGeneration(generation: (() => number | undefined) | undefined): number | undefined {
  try {
    return generation?.();
  } catch {
    return undefined; // the database is unwell: the manifest goes without its generation
  }
}
