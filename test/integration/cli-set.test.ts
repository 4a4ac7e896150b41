/**
 * `homeostat set` talks to the daemon through the broker, like Home Assistant, and reports the
 * daemon's answer: a real Mosquitto (private port) and the daemon as a child process. The config
 * turns the HTTP API off, so the CLI goes straight to the broker: it must never try the default
 * address, where a developer's own daemon (`npm start`) may listen.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { demoConfigText, runCli } from './helpers.js';
import { daemonOnBrokerForSuite } from './suite-daemon.js';

describe('homeostat set', () => {
  const suite = daemonOnBrokerForSuite('homeostat-set-', (broker) =>
    demoConfigText((doc) => {
      doc.setIn(['mqtt', 'url'], broker.url);
      doc.setIn(['http', 'enabled'], false);
    }),
  );

  /** The CLI said it went through the broker (not an HTTP API somewhere). */
  const viaBroker = (stderr: string) =>
    assert.match(stderr, /sending through the broker at mqtt:\/\/127\.0\.0\.1:\d+/);

  test('given a running daemon, when a valid setpoint is set, then it is accepted with a new generation (exit 0)', async () => {
    const result = await runCli(['set', 'room', '--setpoint', '21.5', '--config', suite.configPath]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^room: accepted \(generation 2\)$/m);
    viaBroker(result.stderr);
  });

  test('the same value again is accepted without a new generation (idempotent)', async () => {
    const result = await runCli(['set', 'room', '--setpoint', '21.5', '--config', suite.configPath]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /accepted \(generation 2\)/);
    viaBroker(result.stderr);
  });

  test('a mode the loop does not have is rejected with the reason (exit 1)', async () => {
    const result = await runCli(['set', 'room', '--mode', 'cool', '--config', suite.configPath]);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /room: rejected: mode "cool" is not allowed for this loop \(allowed: off, heat\)/,
    );
    viaBroker(result.stderr);
  });

  test('a setpoint outside the limits is rejected, not clamped (exit 1)', async () => {
    const result = await runCli(['set', 'room', '--setpoint', '99', '--config', suite.configPath]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /outside the limits 5\.\.30/);
    viaBroker(result.stderr);
  });

  test('usage errors exit 2', async () => {
    assert.equal((await runCli(['set', 'room', '--config', suite.configPath])).code, 2);
    assert.equal((await runCli(['set', 'room', '--setpoint', 'warm', '--config', suite.configPath])).code, 2);
  });
});
