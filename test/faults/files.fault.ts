import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CliProcess, sleep } from '../integration/helpers.js';
import { faultConfigText, LOOPS, stateTopic } from './support/config.js';
import { measureFrom, probeSamples, rssOf, startProbedDaemon } from './support/daemon.js';
import { reportFigures } from './support/figures.js';
import { condition } from './support/mqtt.js';
import {
  assertFreshlyReconciled,
  openScenario,
  Resources,
  startRegulating,
  Verdicts,
} from './support/scenario.js';

/**
 * Files named by the config: `/dev/zero` as the config or as the password file grew
 * the process to 14 GB; a 58 MB config reloaded live froze the daemon for 135 s and then
 * crashed it without driving the actuators safe. Files are read with a size cap, refused with
 * a clear message, and a reload is parsed without stalling the loops.
 */

const SPEED = 60;
/** Generous bound on RSS while reading a file that never ends. */
const RSS_BOUND_BYTES = 300 * 1024 * 1024;
const MAX_STALL_MS = 1_000;

/** Polls a child's RSS every 50 ms until it exits; resolves with the peak. */
async function peakRssUntilExit(run: CliProcess): Promise<number> {
  let peak = 0;
  while (!run.exitStatus) {
    peak = Math.max(peak, rssOf(run.child.pid) ?? 0);
    await sleep(50);
  }
  return peak;
}

describe('files named by the config', () => {
  test('/dev/zero as the config: refused quickly with a message, memory bounded', {
    timeout: 60_000,
  }, async (t) => {
    const res = new Resources(t);
    const v = new Verdicts();
    const dir = res.tempDir('homeostat-fault-devzero-');
    const startedAtMs = Date.now();
    const run = res.daemon(new CliProcess(['run', '--config', '/dev/zero', '--db', join(dir, 'state.db')]));
    const killer = setTimeout(() => void run.kill('SIGKILL'), 20_000);
    const peakRssBytes = await peakRssUntilExit(run);
    clearTimeout(killer);
    const tookMs = Date.now() - startedAtMs;
    v.check('exit 1 (not killed)', () => assert.deepEqual(run.exitStatus, { code: 1, signal: null }));
    v.check(`peak RSS under ${RSS_BOUND_BYTES / 1_048_576} MB`, () =>
      assert.ok(peakRssBytes < RSS_BOUND_BYTES, `${Math.round(peakRssBytes / 1_048_576)} MB`),
    );
    const message = run.lines.find((l) => l.level >= 50)?.msg ?? run.stderr.trim().split('\n')[0] ?? '';
    v.check('a message naming the file', () => assert.match(message, /\/dev\/zero/));
    reportFigures(t, {
      scenario: '/dev/zero as the config',
      rssAfterBytes: peakRssBytes,
      notes: `exit ${JSON.stringify(run.exitStatus)} after ${tookMs} ms; peak RSS shown; "${message.slice(0, 100)}"`,
    });
    v.settle();
  });

  test('/dev/zero as the MQTT password file: MQTT refused loudly, regulation runs, memory bounded', {
    timeout: 60_000,
  }, async (t) => {
    const res = new Resources(t);
    const v = new Verdicts();
    const broker = await res.broker();
    const dir = res.tempDir('homeostat-fault-devzero-pw-');
    const configPath = join(dir, 'homeostat.yaml');
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => {
          doc.setIn(['mqtt', 'username'], 'homeostat');
          doc.setIn(['mqtt', 'passwordFile'], '/dev/zero');
        },
      }),
    );
    const daemon = startProbedDaemon({ configPath, dbPath: join(dir, 'state.db'), speed: SPEED, dir });
    res.daemon(daemon.run);
    let peakRssBytes = 0;
    const regulating = daemon.run.waitForLine(/^homeostat regulating/, 20_000).then(
      () => true,
      () => false,
    );
    while (
      !daemon.run.exitStatus &&
      !daemon.run.find(/^homeostat regulating/) &&
      peakRssBytes < RSS_BOUND_BYTES * 2
    ) {
      peakRssBytes = Math.max(peakRssBytes, rssOf(daemon.run.child.pid) ?? 0);
      await sleep(50);
    }
    if (peakRssBytes >= RSS_BOUND_BYTES * 2) await daemon.run.kill('SIGKILL');
    const ok = await regulating;
    await sleep(1_000);
    peakRssBytes = Math.max(peakRssBytes, ...probeSamples(daemon.probePath).map((s) => s.rssBytes));
    v.check('regulating', () => assert.ok(ok, 'no "homeostat regulating"'));
    v.check(`peak RSS under ${RSS_BOUND_BYTES / 1_048_576} MB`, () =>
      assert.ok(peakRssBytes < RSS_BOUND_BYTES, `${Math.round(peakRssBytes / 1_048_576)} MB`),
    );
    const complaint = daemon.run.lines.find((l) => l.level >= 40 && /password/i.test(l.msg));
    v.check('the password file problem is logged', () =>
      assert.ok(complaint, 'no warning or error about it'),
    );
    reportFigures(t, {
      scenario: '/dev/zero as the password file',
      rssAfterBytes: peakRssBytes,
      notes: `peak RSS shown; "${complaint?.msg.slice(0, 100) ?? 'no message'}"`,
    });
    v.settle();
  });

  test('a 58 MB config written while running: refused without stalling the loops; a later edit applies', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-bigconfig-');
    const { res, v, broker, client, configPath } = scenario;
    const text = faultConfigText({ brokerUrl: broker.url });
    writeFileSync(configPath, text);
    const daemon = await startRegulating(res, scenario, { speed: SPEED });
    await sleep(500);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);

    // When the file grows to 58 MB (a valid config followed by a huge comment)
    const measured = await measureFrom(daemon);
    const _grownAtMs = Date.now();
    writeFileSync(configPath, text);
    const line = `# ${'x'.repeat(1022)}\n`;
    const chunk = line.repeat(1024); // 1 MiB
    for (let i = 0; i < 58; i++) appendFileSync(configPath, chunk);
    await sleep(5_000);
    const stall = measured();
    const configValid = condition(client.latestState(stateTopic('room')), 'ConfigValid');
    v.check('the daemon survives', () => assert.equal(daemon.run.exitStatus, undefined));
    v.check(`no event-loop stall over ${MAX_STALL_MS} ms`, () =>
      assert.ok(stall.longestStallMs < MAX_STALL_MS, `${stall.longestStallMs} ms`),
    );
    for (const loop of LOOPS) {
      v.check(`${loop} still publishes reconciled states`, () => assertFreshlyReconciled(client, loop));
    }
    // And a later, normal edit applies
    const editedAtMs = Date.now();
    writeFileSync(
      configPath,
      faultConfigText({ brokerUrl: broker.url, edit: (doc) => doc.setIn(['loops', 'room', 'setpoint'], 21) }),
    );
    await v.checkAsync('a later edit applies', () =>
      client.state(stateTopic('room'), (s) => s.setpoint === 21, { sinceMs: editedAtMs, timeoutMs: 15_000 }),
    );
    reportFigures(t, {
      scenario: '58 MB config reloaded live',
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `ConfigValid ${configValid?.status ?? '?'} (${configValid?.reason ?? '?'}): ${configValid?.message.slice(0, 100) ?? ''}`,
    });
    v.settle();
  });
});
