/**
 * Reading a config file: YAML text → checked `Config`, or one `path: message` line per
 * problem (the `homeostat validate` contract). Nothing here throws: every failure, from a
 * missing file to a wrong-sign gain, comes back as `{ ok: false, errors }`. A valid file may
 * still carry `warnings`, one `path: message (deprecated)` line each (a key under its old name):
 * printed by `validate`, logged by `run`, never a reason to refuse the file.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { LineCounter, parseDocument } from 'yaml';
import { globalRegistry, type z } from 'zod';
import { renamedKeyWarnings } from './schema/renamed.js';
import { type Config, configSchema } from './schema.js';

export type ConfigResult =
  | { ok: true; config: Config; text: string; warnings: string[] }
  | { ok: false; errors: string[] };
export type ValidationResult =
  | { ok: true; config: Config; warnings: string[] }
  | { ok: false; errors: string[] };

/** Label for issues on the whole document (an empty path). */
const ROOT = '(root)';

/**
 * Parses and validates config text. `sourceName` (usually the file path) prefixes errors
 * about the text as a whole: YAML syntax (`demo.yaml:3:7: message`) and an empty file.
 * `text` in the result is the input unchanged, for hashing into a generation.
 */
export function parseConfigText(text: string, sourceName?: string): ConfigResult {
  const lineCounter = new LineCounter();
  let data: unknown;
  try {
    // prettyErrors off: its messages span several lines; we print the position ourselves.
    const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length > 0) {
      const prefix = sourceName === undefined ? '' : `${sourceName}:`;
      return {
        ok: false,
        errors: doc.errors.map((error) => {
          const { line, col } = lineCounter.linePos(error.pos[0]);
          return `${prefix}${line}:${col}: ${yamlMessage(error.code, error.message)}`;
        }),
      };
    }
    data = doc.toJS();
  } catch (error) {
    // toJS throws on alias bombs and the like; still one line, no stack.
    return { ok: false, errors: [`${sourceName ?? ROOT}: ${errorMessage(error)}`] };
  }
  if (data === null || data === undefined) {
    return {
      ok: false,
      errors: [`${sourceName ?? ROOT}: empty config; expected a YAML mapping that starts with "version: 1"`],
    };
  }
  const result = validateConfig(data);
  return result.ok ? { ok: true, config: result.config, text, warnings: result.warnings } : result;
}

/**
 * The largest config file read, bytes (128 KiB). A real config is a few KB (the commented demo
 * with 3 loops is 4 KB; 128 KiB holds about 350 loops). The cap keeps a wrong path
 * (`/dev/zero`, a log file, a disk image) from filling memory, and bounds how long a reload's
 * parse can take: a file at the cap full of loops takes about 0.6 s to parse and validate, on a
 * worker thread for reloads (see loadConfigFileOffThread; `node --import tsx
 * test/bench/config-reload.ts` measures it).
 */
export const MAX_CONFIG_BYTES = 131_072;

/**
 * Reads and parses a config file. Unreadable files, anything but a regular file (a device such
 * as `/dev/zero`, a named pipe, a directory; symlinks count as their target) and files over
 * {@link MAX_CONFIG_BYTES} give one error naming the file, without reading it.
 */
export function loadConfigFile(path: string): ConfigResult {
  const read = readConfigText(path);
  return read.ok ? parseConfigText(read.text, path) : { ok: false, errors: [`${path}: ${read.error}`] };
}

/**
 * {@link loadConfigFile} on a worker thread, for reloads while loops run: parsing and
 * validating a file at the size cap takes up to seconds (a thousand loops), and on the event
 * loop that would hold every loop, timer and message for as long. The worker's heap is
 * capped; a worker that fails or does not answer within `timeoutMs` gives one error, and the
 * running config stays. Measured by test/bench/config-reload.ts.
 */
export function loadConfigFileOffThread(path: string, timeoutMs = 60_000): Promise<ConfigResult> {
  // Built, the entry is load-worker.js. From source (tests, tsx) it is a .ts file, which a
  // worker can only load after registering tsx itself (loader hooks are per thread).
  const fromSource = import.meta.url.endsWith('.ts');
  const entryUrl = new URL(fromSource ? './load-worker.ts' : './load-worker.js', import.meta.url);
  const entry = fromSource
    ? `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entryUrl.href)}); });`
    : entryUrl;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ConfigResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const fail = (why: string) => finish({ ok: false, errors: [`${path}: ${why}`] });
    const worker = new Worker(entry, {
      eval: fromSource,
      workerData: { path },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    const timer = setTimeout(() => fail(`not parsed within ${timeoutMs / 1000} s`), timeoutMs);
    worker.once('message', (result: ConfigResult) => finish(result));
    worker.once('error', (error) => fail(`could not be parsed (${errorMessage(error)})`));
    worker.once('exit', (code) => fail(`the parser stopped (exit code ${code})`));
  });
}

/**
 * The text of a config file, read with the checks of {@link loadConfigFile}: opened without
 * blocking (a named pipe with no writer would hang the open), checked to be a regular file no
 * larger than `maxBytes`, then read into a buffer of `maxBytes + 1` bytes at most, so a file
 * that grows while it is read (or a size the kernel reports wrongly) is still capped.
 */
export function readConfigText(
  path: string,
  maxBytes = MAX_CONFIG_BYTES,
): { ok: true; text: string } | { ok: false; error: string } {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stats = fstatSync(fd);
    if (stats.isDirectory()) return { ok: false, error: 'is a directory, not a config file' };
    if (!stats.isFile()) {
      return { ok: false, error: `not a regular file (${fileKind(stats)}); give the path of a YAML file` };
    }
    if (stats.size > maxBytes) return { ok: false, error: tooLarge(stats.size, maxBytes) };
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) return { ok: false, error: tooLarge(length, maxBytes, 'at least ') };
    }
    return { ok: true, text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return { ok: false, error: readErrorMessage(error) };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function tooLarge(bytes: number, maxBytes: number, qualifier = ''): string {
  const kib = maxBytes / 1024;
  return `${qualifier}${bytes} bytes is too large for a config file (limit ${maxBytes} bytes${
    Number.isInteger(kib) ? ` = ${kib} KiB` : ''
  }; a real one is a few KB)`;
}

function fileKind(stats: Stats): string {
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** Validates an already-decoded value (e.g. from tests or a JSON source). */
export function validateConfig(data: unknown): ValidationResult {
  const result = configSchema.safeParse(data, { error: configErrorMap });
  if (!result.success) return { ok: false, errors: formatZodIssues(result.error.issues) };
  const warnings = renamedKeyWarnings(data).map(
    ({ path, message }) => `${formatPath(path)}: ${message} (deprecated)`,
  );
  return { ok: true, config: result.data, warnings };
}

// ---------------------------------------------------------------------------------------
// Zod issues → `path: message`

/**
 * One `path: message` line per issue. Paths are dotted with list indices in brackets
 * (`simulation.plants.room.disturbances[0].atS`); an unknown key gets a line of its own
 * with the key in the path (`loops.room.setpont: unknown key (did you mean "setpoint"?)`).
 */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const allowed = parseAllowed(issue.message);
      for (const key of issue.keys) {
        lines.push(`${formatPath([...issue.path, key])}: unknown key${unknownKeyHint(key, allowed)}`);
      }
    } else if (issue.code === 'invalid_key') {
      // The record key itself is wrong; its own issue says why.
      lines.push(`${formatPath(issue.path)}: ${issue.issues[0]?.message ?? issue.message}`);
    } else {
      lines.push(`${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return [...new Set(lines)];
}

/**
 * `loops.room.limits.min`, `…disturbances[0].atS`; a key that would not read back plainly
 * (empty, or with dots, spaces, brackets, quotes) is quoted: `loops["living room"]`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[^.\s[\]"]+$/.test(segment))
      out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out === '' ? ROOT : out;
}

/**
 * Messages for people editing YAML rather than TypeScript: "expected a number, got "abc"",
 * "required", "must be > 0 (got -1)". Messages a schema sets itself take precedence.
 */
export const configErrorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `expected ${typeName(iss.expected)}, got ${describeValue(iss.input)}`;
    case 'too_small':
      if (iss.origin === 'string') return 'must not be empty';
      return `must be ${iss.inclusive ? '>=' : '>'} ${String(iss.minimum)} (got ${describeValue(iss.input)})`;
    case 'too_big':
      return `must be ${iss.inclusive ? '<=' : '<'} ${String(iss.maximum)} (got ${describeValue(iss.input)})`;
    case 'invalid_value':
      return iss.values.length === 1
        ? `must be ${describeValue(iss.values[0])} (got ${describeValue(iss.input)})`
        : `must be one of ${iss.values.map(describeValue).join(', ')} (got ${describeValue(iss.input)})`;
    case 'unrecognized_keys': {
      const shape = (iss.inst as { _zod?: { def?: { shape?: Record<string, z.ZodType> } } } | undefined)?._zod
        ?.def?.shape;
      return shape ? `unknown key; allowed: ${currentKeys(shape).join(', ')}` : 'unknown key';
    }
    case 'invalid_union': {
      const { discriminator, options } = iss as { discriminator?: string; options?: unknown[] };
      if (discriminator === undefined || !options) return undefined;
      const value = isRecord(iss.input) ? iss.input[discriminator] : undefined;
      const choices = options.map(describeValue).join(', ');
      return value === undefined
        ? `required (one of ${choices})`
        : `unknown ${discriminator} ${describeValue(value)} (expected one of ${choices})`;
    }
    case 'invalid_format':
      return iss.format === 'regex' ? `must match ${String(iss.pattern)}` : undefined;
    default:
      return undefined;
  }
};

// ---------------------------------------------------------------------------------------
// Helpers

function typeName(expected: string): string {
  switch (expected) {
    case 'object':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'int':
      return 'an integer';
    case 'boolean':
      return 'true or false';
    default:
      return `a ${expected}`;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The keys of an object schema, without the deprecated ones (still read, never suggested). */
function currentKeys(shape: Record<string, z.ZodType>): string[] {
  return Object.keys(shape).filter((key) => {
    const field = shape[key];
    return field === undefined || globalRegistry.get(field)?.deprecated !== true;
  });
}

function parseAllowed(message: string): string[] {
  const match = /^unknown key; allowed: (.*)$/.exec(message);
  return match?.[1] ? match[1].split(', ') : [];
}

/** Suggest the closest allowed key when the unknown one looks like a typo of it. */
function unknownKeyHint(key: string, allowed: string[]): string {
  if (allowed.length === 0) return '';
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of allowed) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  const closeEnough = Math.max(1, Math.floor(key.length / 3));
  return best !== undefined && bestDistance <= closeEnough
    ? ` (did you mean "${best}"?)`
    : ` (allowed: ${allowed.join(', ')})`;
}

/** Levenshtein distance; keys are short, so the O(n·m) table is fine. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function yamlMessage(code: string, message: string): string {
  // yaml's own advice here names its API, which a config author cannot act on.
  if (code === 'MULTIPLE_DOCS') return 'the file holds more than one YAML document; remove the extra "---"';
  return message;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function readErrorMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'config file not found';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied reading the config file';
    case 'EISDIR':
      return 'is a directory, not a config file';
    default:
      return `cannot read the config file (${errorMessage(error)})`;
  }
}
