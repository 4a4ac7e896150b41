#!/usr/bin/env node
import { main } from './commands/main.js';
import { exitWhenDrained, ignoreClosedReaders } from './commands/output.js';

// `homeostat`: src/commands/main.ts on this process's streams, ended once every byte is out.

ignoreClosedReaders();
main(process.argv.slice(2)).then(
  // Every byte reaches a pipe, however slow its reader (src/commands/output.ts).
  (code) => exitWhenDrained(code),
  (error) => {
    process.stderr.write(`homeostat: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
