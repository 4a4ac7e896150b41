/**
 * `homeostat ARGS…` run in the test's own process (src/commands/main.ts, as src/cli.ts runs it,
 * without the process's streams): for tests of what a one-shot command prints and returns, which
 * spawning a process per call (Node and tsx start-up, about half a second each) made slow.
 * cli.test.ts and the integration tests spawn the real command.
 */
import { main } from '../../src/commands/main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCliHere(args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    write: (line) => {
      stdout += `${line}\n`;
    },
    note: (line) => {
      stderr += `${line}\n`;
    },
  });
  return { code, stdout, stderr };
}
