/**
 * The command line's whole output reaches a pipe: a reader slower than the command used to get
 * the pipe's 65,536 bytes and no more (the exit deadline fired before the rest drained), and a
 * reader that stops early (`| head -c`) used to get a stack trace (EPIPE) from it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openStore } from '../src/store/database.js';
import { DesiredStore } from '../src/store/desired-store.js';
import { silentLogger } from './support/logger.js';
import { tempDir } from './support/tmp.js';

const CLI = `${JSON.stringify(process.execPath)} --import tsx src/cli.ts`;

/** A database whose `events --json` is far beyond a pipe's buffer (about 600 kB). */
function bigDatabase(dir: string): string {
  const dbPath = path.join(dir, 'big.db');
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: Date.now });
  const desired = new DesiredStore(db, Date.now);
  for (let i = 0; i < 3_000; i++) {
    desired.recordEvent({
      loop: 'room',
      kind: 'actuator',
      source: 'regulate',
      message: `room_heater → ${i % 2} (regulate: output ${i} %, a message of a realistic length)`,
    });
  }
  db.close();
  return dbPath;
}

/** `script` run by bash in the repository; its stdout. */
const bash = (script: string) => execFileSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });

describe('given a command whose output is larger than a pipe holds (events --json, ~600 kB)', () => {
  const dir = tempDir({ after }, 'homeostat-pipe-');
  const dbPath = bigDatabase(dir);
  const toFile = path.join(dir, 'events.json');
  bash(`${CLI} events --json --db ${dbPath} > ${toFile} 2>/dev/null`);
  const fileBytes = readFileSync(toFile).byteLength;

  test('then written to a file it is all there (the reference), far more than 64 KiB', () => {
    assert.ok(fileBytes > 4 * 65_536, `${fileBytes} bytes`);
  });

  test('when the reader only starts after 4 s (beyond the exit deadline), then it still gets every byte', () => {
    const counted = bash(`${CLI} events --json --db ${dbPath} 2>/dev/null | (sleep 4; wc -c)`);
    assert.equal(Number(counted.trim()), fileBytes);
  });

  test('when the reader stops after 1000 bytes (head -c), then it gets them, and the command exits 0 without an EPIPE trace', () => {
    const out = bash(
      `${CLI} events --json --db ${dbPath} 2>${dir}/err.txt | head -c 1000 | wc -c; echo "exit \${PIPESTATUS[0]}"`,
    );
    assert.deepEqual(out.trim().split('\n'), ['1000', 'exit 0']);
    assert.doesNotMatch(readFileSync(path.join(dir, 'err.txt'), 'utf8'), /EPIPE|Error/);
  });
});
