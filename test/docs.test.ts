/**
 * The documentation as a whole (README.md and docs/**\/*.md) stays usable:
 *
 * 1. Every relative link resolves to a file of the repository, and every `#anchor` (in the page
 *    or into another .md) names a heading of its target, by GitHub's slug rule (lowercase, spaces
 *    to `-`, punctuation dropped except `-` and `_`, a repeated heading gets `-1`, `-2`…) or an
 *    explicit `<a id>`/`<a name>`.
 * 2. Every homeostat config snippet is accepted by the config validation `homeostat validate`
 *    runs (parseConfigText of src/config/load.ts). Which ```yaml blocks are snippets:
 *    - a block with a top-level `version:` key is a whole config, validated as it is;
 *    - a block without one whose top-level keys are all config sections (`node`, `mqtt`,
 *      `http`, `storage`, `gpio`, `sensors`, `actuators`, `loops`, `simulation`) is a fragment:
 *      it is merged into MINIMAL_CONFIG below (one simulated loop and a broker; its ids beside
 *      the minimal one's, its loops in place of the minimal loop) and the result validated. A
 *      loop in a fragment takes each key it leaves out from MINIMAL_LOOP, and a sensor or
 *      actuator it names without defining becomes a simulated one: a page may show only the
 *      keys it is about;
 *    - any other ```yaml block (a Prometheus job, an ESPHome node, the entries of one section
 *      such as docs/mqtt-contacts.md's sensors, which its own test checks) is not a homeostat
 *      config and is not checked here. Write `yaml not-homeostat` as the info string to say so
 *      for a block that would otherwise be taken for a fragment.
 * 3. README.md is a front door: at most 250 lines.
 *
 * docs/development.md states the same convention for people writing docs.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseConfigText } from '../src/config/load.js';
import { configInputSchema } from '../src/config/schema.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const README_MAX_LINES = 250;

/** Top-level keys of a homeostat config (the schema's, but `version`); a block made only of these is a fragment. */
const CONFIG_SECTIONS = new Set(Object.keys(configInputSchema.shape).filter((key) => key !== 'version'));

/** The loop of MINIMAL_CONFIG: a loop in a fragment takes from it each key it leaves out. */
const MINIMAL_LOOP = {
  sensor: 'docs_probe',
  raise: 'docs_heater',
  setpoint: 20,
  limits: { min: -20, max: 100 },
  controller: { type: 'hysteresis' },
};

/** The smallest config a fragment is merged into: one simulated loop, and a broker for MQTT kinds. */
const MINIMAL_CONFIG = {
  version: 1,
  node: { id: 'docs' },
  mqtt: {},
  simulation: { plants: { docs_plant: { kind: 'thermal', ambient: 10, timeConstantS: 600 } } },
  sensors: { docs_probe: { kind: 'simulated', plant: 'docs_plant' } },
  actuators: { docs_heater: { kind: 'simulated_relay', plant: 'docs_plant', gain: 20 } },
  loops: { docs_loop: MINIMAL_LOOP },
};

interface Page {
  /** Path from the repository root, with `/`. */
  file: string;
  lines: string[];
}

interface CodeBlock {
  /** Line of the opening fence, 1-based. */
  line: number;
  info: string;
  body: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES: Page[] = ['README.md', ...markdownFiles('docs').sort()].map((file) => ({
  file,
  lines: readFileSync(join(REPO, file), 'utf8').split('\n'),
}));

/** Each line's text outside fenced code blocks ('' inside them), and the fenced blocks. */
function splitFences(lines: string[]): { prose: string[]; blocks: CodeBlock[] } {
  const prose: string[] = [];
  const blocks: CodeBlock[] = [];
  let open: { line: number; indent: number; fence: string; info: string; body: string[] } | undefined;
  lines.forEach((text, i) => {
    // A backtick fence's info string has no backtick (CommonMark): ```` ```yaml ```` is inline code.
    const fence = /^(\s*)(`{3,}(?=[^`]*$)|~{3,})(.*)$/.exec(text);
    if (open === undefined) {
      if (fence)
        open = { line: i + 1, indent: fence[1]!.length, fence: fence[2]!, info: fence[3]!.trim(), body: [] };
      prose.push(fence ? '' : text);
      return;
    }
    prose.push('');
    if (fence && fence[2]!.startsWith(open.fence) && fence[3]!.trim() === '') {
      const body = open.body.map((bodyLine) =>
        bodyLine.slice(Math.min(open!.indent, /^\s*/.exec(bodyLine)![0].length)),
      );
      blocks.push({ line: open.line, info: open.info, body: `${body.join('\n')}\n` });
      open = undefined;
    } else {
      open.body.push(text);
    }
  });
  return { prose, blocks };
}

/** GitHub's anchor for a heading's markdown text. */
export function slug(heading: string): string {
  const text = heading
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`')
        ? part.slice(1, -1)
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]*>/g, '')
            .replace(/[*]/g, ''),
    )
    .join('');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors of a markdown file (repository-relative path). */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const text of splitFences(readFileSync(join(REPO, file), 'utf8').split('\n')).prose) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const html of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(html[1]!);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** The link targets of one line of prose (inline code removed). */
function linkTargets(text: string): string[] {
  const bare = text.replace(/`[^`]*`/g, '');
  const inline = [...bare.matchAll(/\]\(\s*(<[^>]*>|[^)\s]*)[^)]*\)/g)].map((m) =>
    m[1]!.replace(/^<|>$/g, ''),
  );
  const reference = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(bare);
  return reference ? [...inline, reference[1]!] : inline;
}

/** Why a link from `page` to `target` is broken, or undefined when it is not. */
function brokenLink(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined;
  const hashAt = target.indexOf('#');
  const pathPart = decodeURI(hashAt < 0 ? target : target.slice(0, hashAt));
  const anchor = hashAt < 0 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
  const file =
    pathPart === '' ? page : relative(REPO, resolve(REPO, dirname(page), pathPart)).replace(/\\/g, '/');
  if (file.startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(join(REPO, file))) {
    return `${target}: no file ${file}`;
  }
  if (
    anchor === undefined ||
    anchor === '' ||
    !file.endsWith('.md') ||
    statSync(join(REPO, file)).isDirectory()
  )
    return undefined;
  return anchorsOf(file).has(anchor) ? undefined : `${target}: no heading #${anchor} in ${file}`;
}

type Snippet = { kind: 'config' | 'fragment'; text: string };

/** What a ```yaml block is to the docs test (see the convention at the top). */
function snippetOf(block: CodeBlock): Snippet | undefined {
  const [language, ...words] = block.info.split(/\s+/);
  if (language !== 'yaml' || words.includes('not-homeostat')) return undefined;
  let data: unknown;
  try {
    data = YAML.parse(block.body);
  } catch {
    // Not YAML at all: only a block that looks like a config is a (broken) snippet.
    return /^(version|loops|sensors|actuators):/m.test(block.body)
      ? { kind: 'config', text: block.body }
      : undefined;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const keys = Object.keys(data);
  if (keys.includes('version')) return { kind: 'config', text: block.body };
  if (keys.length > 0 && keys.every((key) => CONFIG_SECTIONS.has(key)))
    return { kind: 'fragment', text: block.body };
  return undefined;
}

/**
 * The fragment's sections merged into MINIMAL_CONFIG: its ids added beside the minimal ones, its
 * keys of `node`, `mqtt`… set. A fragment with loops replaces the minimal loop; each of its loops
 * takes the keys it leaves out from MINIMAL_LOOP, and each sensor or actuator it names without
 * defining becomes a simulated one on the minimal plant (the page defines it elsewhere).
 */
function embedded(fragment: string): string {
  const config: Record<string, Record<string, unknown> | number> = structuredClone(MINIMAL_CONFIG);
  for (const [key, value] of Object.entries(YAML.parse(fragment) as Record<string, unknown>)) {
    const base = config[key];
    if (!isMapping(base) || !isMapping(value)) {
      config[key] = value as Record<string, unknown>;
    } else if (key === 'loops') {
      config.loops = Object.fromEntries(Object.entries(value).map(([id, loop]) => [id, completedLoop(loop)]));
    } else if (key === 'simulation' && isMapping(value.plants) && isMapping(base.plants)) {
      config[key] = { ...base, ...value, plants: { ...base.plants, ...value.plants } };
    } else {
      config[key] = { ...base, ...value };
    }
  }
  const sensors = config.sensors as Record<string, unknown>;
  const actuators = config.actuators as Record<string, unknown>;
  for (const loop of Object.values(config.loops as Record<string, unknown>).filter(isMapping)) {
    for (const id of sensorsNamedBy(loop)) sensors[id] ??= { kind: 'simulated', plant: 'docs_plant' };
    for (const [side, gain] of [
      ['raise', 20],
      ['lower', -20],
    ] as const) {
      const id = loop[side];
      if (typeof id === 'string') actuators[id] ??= { kind: 'simulated_relay', plant: 'docs_plant', gain };
    }
  }
  if (
    !Object.values(config.loops as Record<string, unknown>).some(
      (loop) => isMapping(loop) && loop.raise === 'docs_heater',
    )
  )
    delete actuators.docs_heater;
  return YAML.stringify(config);
}

function completedLoop(loop: unknown): unknown {
  if (!isMapping(loop)) return loop;
  const { sensor, ...rest } = MINIMAL_LOOP;
  return { ...rest, ...('sensors' in loop ? {} : { sensor }), ...loop };
}

/** The sensor ids a loop refers to: its sensor or sensors, interlocks, recorded sensors, feedforward. */
function sensorsNamedBy(loop: Record<string, unknown>): string[] {
  const entries = [
    loop.sensor,
    ...(Array.isArray(loop.sensors) ? loop.sensors : []),
    ...(Array.isArray(loop.interlocks) ? loop.interlocks : []),
    ...(Array.isArray(loop.record) ? loop.record : []),
    isMapping(loop.controller) ? loop.controller.feedforward : undefined,
  ];
  return entries
    .map((entry) => (isMapping(entry) ? entry.sensor : entry))
    .filter((id): id is string => typeof id === 'string');
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

describe('the documentation (README.md and docs/)', () => {
  test('every relative link resolves to a file, and every #anchor to a heading of its target', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      splitFences(page.lines).prose.forEach((text, i) => {
        for (const target of linkTargets(text)) {
          const why = brokenLink(page.file, target);
          if (why !== undefined) broken.push(`${page.file}:${i + 1}: ${why}`);
        }
      });
    }
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
  });

  test('every homeostat config snippet is accepted by the config validation', () => {
    const failed: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      for (const block of splitFences(page.lines).blocks) {
        const snippet = snippetOf(block);
        if (snippet === undefined) continue;
        checked += 1;
        const where = `${page.file}:${block.line}`;
        const text = snippet.kind === 'config' ? snippet.text : embedded(snippet.text);
        const result = parseConfigText(text, where);
        if (!result.ok) failed.push(`${where} (${snippet.kind}): ${result.errors.join('; ')}`);
      }
    }
    assert.ok(checked > 0, 'no config snippet found: the convention no longer matches the docs');
    assert.deepEqual(failed, [], `config snippets refused:\n${failed.join('\n')}`);
  });

  test(`README.md is at most ${README_MAX_LINES} lines`, () => {
    const readme = PAGES.find((page) => page.file === 'README.md')!;
    const count = readme.lines.at(-1) === '' ? readme.lines.length - 1 : readme.lines.length;
    assert.ok(count <= README_MAX_LINES, `README.md has ${count} lines; move detail into docs/`);
  });

  test('a fence opens only where CommonMark opens one', () => {
    const { prose, blocks } = splitFences([
      'A',
      '  ```` ```yaml ```` is inline code',
      '```yaml',
      'x: 1',
      '```',
      'B',
    ]);
    assert.deepEqual(prose, ['A', '  ```` ```yaml ```` is inline code', '', '', '', 'B']);
    assert.deepEqual(blocks, [{ line: 3, info: 'yaml', body: 'x: 1\n' }]);
  });

  test('the slug rule is GitHub’s', () => {
    assert.equal(slug('Presets, schedules and profiles'), 'presets-schedules-and-profiles');
    assert.equal(
      slug('`homeostat safe`: the last line of defence'),
      'homeostat-safe-the-last-line-of-defence',
    );
    assert.equal(
      slug('#### `sensors.<id>.liveness` (kind: mqtt)'.replace(/^#+ /, '')),
      'sensorsidliveness-kind-mqtt',
    );
    assert.equal(slug('Event streams (`GET /api/stream`)'), 'event-streams-get-apistream');
  });
});
