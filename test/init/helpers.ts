/** What the init tests share: fixture roots, a run of initCommand into a temp dir, scripted answers. */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type InitDeps, type InitOptions, initCommand } from '../../src/commands/init.js';
import { type Ask, NoAnswer } from '../../src/init/prompt.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

/** A fake sysfs tree under test/fixtures/sys (README there; pi4-one-ds18b20, pi5-two-ds18b20, w1-bus-empty are init's). */
export const fixture = (name: string) => resolve('test/fixtures/sys', name);

/** The host name every test's node id comes from. */
export const HOSTNAME = 'raspberrypi';

export interface InitRun {
  code: number;
  lines: string[];
  /** Where the config was to be written. */
  path: string;
  /** The file written, undefined when there is none. */
  text: string | undefined;
}

/** initCommand into a new temp dir (file `config.yaml`), non-interactive unless `ask` is given. */
export async function runInit(
  t: HasAfter,
  opts: Partial<InitOptions> & { tree?: string } = {},
  deps: InitDeps = {},
): Promise<InitRun> {
  const { tree, ...rest } = opts;
  const path = opts.outPath ?? join(tempDir(t, 'homeostat-init-'), 'config.yaml');
  const lines: string[] = [];
  const code = await initCommand(
    {
      sysfsRoot: tree === undefined ? fixture('no-chips') : fixture(tree),
      interactive: deps.ask !== undefined,
      ...rest,
      outPath: path,
    },
    (line) => lines.push(line),
    { hostname: () => HOSTNAME, nowMs: () => 0, ...deps },
  );
  return {
    code,
    lines,
    path,
    text: isFile(path) ? readFileSync(path, 'utf8') : undefined,
  };
}

/** An Ask that answers from `answers` in order and records the questions; no answer left: NoAnswer. */
export function scripted(answers: string[]): Ask & { questions: string[] } {
  const queue = [...answers];
  const questions: string[] = [];
  const ask = async (question: string) => {
    questions.push(question);
    const answer = queue.shift();
    if (answer === undefined) throw new NoAnswer();
    return answer;
  };
  return Object.assign(ask, { questions });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
